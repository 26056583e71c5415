/** What every page component receives: the parts of its path named in routes.ts (`:id`). */
import type { ComponentType } from "preact";

export interface PageProps {
  params: Record<string, string>;
}

export type Page = ComponentType<PageProps>;
