import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  method: string;
  /** Fastify's form: `/v1/notifications/:id`. */
  path: string;
}

/**
 * Every route Fastify reports, read back from `printRoutes({ commonPrefix: false })`. The tree nests
 * children 4 columns deeper and prints each child as the text that follows its parent's path
 * (`/v1/broadcast` then `s/:id`), so a full path is the concatenation down the tree.
 */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  const routes: RegisteredRoute[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = match[1].length / 4;
    stack.length = depth;
    const path = (stack[depth - 1] ?? '') + match[2];
    stack.push(path);
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, path });
  }
  return routes;
}

/** `/v1/notifications/:id` → `/v1/notifications/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}
