import { fromModules } from '@cuadra/shared';
import { projectsModule } from './projects.ts';
import { tasksModule } from './tasks.ts';

/** The projects (work, calendar) subgraph: its built modules, then those DOMAIN.md assigns it that are not built yet. */
export const owned = fromModules('projects', [projectsModule, tasksModule], ['calendar', 'agenda']);
