import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context.js';
import { buildAiPlugin } from './build-ai-plugin.js';
import { buildSkills } from './build-skills.js';
import { renderQuickstartMd, renderSkillsMd } from './render-skills-md.js';
import type { Skills } from './skills-schema.js';
import { skillsJsonSchema } from './skills-schema.js';

const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="12" fill="#111"/>' +
  '<path d="M16 20h32v24H16z" fill="none" stroke="#7cf" stroke-width="4"/><circle cx="32" cy="32" r="5" fill="#7cf"/></svg>';

/**
 * The agent-discovery files and the OpenAPI document. Everything is generated on first request from
 * the live config and the complete route table (so it cannot drift from the code), then cached.
 */
export async function discoveryRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  let skills: Skills | undefined;
  const getSkills = () => {
    skills ??= buildSkills(ctx);
    return skills;
  };
  const doc = (summary: string) => ({ schema: { summary, tags: ['discovery'] } });

  app.get('/.well-known/ai-plugin.json', doc('Agent plugin manifest'), async () => buildAiPlugin(ctx.config));
  app.get('/SKILLS.md', doc('Full integration guide (Markdown)'), async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').send(renderSkillsMd(getSkills())),
  );
  app.get('/api/skills', doc('Quick-start guide (Markdown)'), async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').send(renderQuickstartMd(getSkills())),
  );
  app.get('/api/skills.json', doc('Machine-readable capabilities'), async () => getSkills());
  app.get('/api/skills.schema.json', doc('JSON Schema of /api/skills.json'), async () => skillsJsonSchema());
  app.get('/api/openapi.json', doc('OpenAPI 3 document of /api, /v1 and /tx'), async () => app.swagger());
  app.get('/logo.svg', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('image/svg+xml').send(LOGO_SVG),
  );
}
