// A webhook deliverer alone in its own process, on the test's databases: the crash test SIGKILLs it mid-send.
import { connectDatabase, createLogger, createSealer, Governance } from '@cuadra/shared';
import { WebhookDeliverer } from '../../src/modules/webhooks/deliverer.ts';

const env = process.env;
const db = await connectDatabase(env.MONGO_URL!, env.WEBHOOKS_DB!);
const governance = new Governance(await connectDatabase(env.MONGO_URL!, env.WEBHOOKS_GOVERNANCE_DB!));
const deliverer = new WebhookDeliverer({ db, governance, sealer: createSealer(Buffer.from(env.WEBHOOKS_SEAL_KEY!, 'base64')), log: createLogger('deliverer', 'silent'), allowPrivate: true });
deliverer.start(20);
process.stdout.write('ready\n');
