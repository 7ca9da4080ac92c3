import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  Inject,
  Injectable,
  Logger,
  Optional,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { UNSERVED_ROUTE_TABLES } from '../proxy/unserved.js';
import type { ViewDefinition, ViewSet } from './view-definition.js';
import { loadViewsFile, ViewsFileError, type RouteCatalogEntry } from './views-file.js';

/** The shipped views, read when ATRIUM_VIEWS_FILE is unset (relative to the working directory, the repository). */
export const DEFAULT_VIEWS_FILE = 'config/views.yaml';

/**
 * The views in force. Loaded at boot, once every interface has registered its routes: an invalid file
 * stops the boot with a message naming the view and the field. SIGHUP reloads it (as an operator edits it
 * in place); an invalid file then keeps the previous set in force and the log says why.
 */
@Injectable()
export class ViewsRegistry implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Views');
  private set: ViewSet = { views: new Map(), source: 'none' };
  private readonly onHangup = () => {
    this.reload();
  };

  constructor(
    private readonly proxy: ProxyService,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Optional()
    @Inject(UNSERVED_ROUTE_TABLES)
    private readonly unserved: readonly RouteCatalogEntry[] = [],
  ) {}

  onApplicationBootstrap(): void {
    this.set = this.load();
    this.logger.log(`${this.set.views.size} view(s) from ${this.set.source}`);
    process.on('SIGHUP', this.onHangup);
  }

  onApplicationShutdown(): void {
    process.off('SIGHUP', this.onHangup);
  }

  get(name: string): ViewDefinition | undefined {
    return this.set.views.get(name);
  }

  all(): ViewDefinition[] {
    return [...this.set.views.values()];
  }

  get source(): string {
    return this.set.source;
  }

  /** Re-reads the file; true when the new set is in force, false when the previous one stays. */
  reload(): boolean {
    try {
      this.set = this.load();
      this.logger.log(`reloaded: ${this.set.views.size} view(s) from ${this.set.source}`);
      return true;
    } catch (e) {
      if (!(e instanceof ViewsFileError)) throw e;
      this.logger.error(
        `reload refused, the previous ${this.set.views.size} view(s) stay in force: ${e.message}`,
      );
      return false;
    }
  }

  private load(): ViewSet {
    const configured = this.config.views.file;
    if (configured === 'none') return { views: new Map(), source: 'none' };
    const path = resolve(configured ?? DEFAULT_VIEWS_FILE);
    // The shipped file is optional (an image without it has no views); a configured one must exist.
    if (!configured && !existsSync(path)) return { views: new Map(), source: 'none' };
    // Interfaces this deployment does not serve stay in the catalog: a view reading them still loads, and
    // says in its answer that the interface is not served (ViewsService).
    const catalog: RouteCatalogEntry[] = [...this.proxy.all().map(({ def }) => def), ...this.unserved];
    return loadViewsFile(path, catalog, { maxTimeoutMs: this.config.views.maxTimeoutMs });
  }
}
