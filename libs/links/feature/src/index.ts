// The links context's API (docs/design.md, "Link options", "Batch creation", "Import and export").
export { LINKS_PORTS, LinksModule } from './links.module';
