import { fromModules } from '@cuadra/shared';
import { consentsModule } from './consents/index.ts';
import { emailAccountsModule } from './email_accounts/index.ts';
import { emailCampaignsModule } from './email_campaigns/index.ts';
import { emailRowsModule } from './email_rows/index.ts';
import { emailTemplatesModule } from './email_templates/index.ts';
import { marketingAdAccountsModule } from './marketing_ad_accounts/index.ts';
import { sitesModule } from './sites/index.ts';

/** The marketing subgraph: its built modules, then the modules DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('marketing', [emailAccountsModule, emailTemplatesModule, consentsModule, emailCampaignsModule, emailRowsModule, marketingAdAccountsModule, sitesModule], []);
