import { html } from 'hono/html';
import { page, table, type Html, type PageContext } from '../layout';
import type { ConsoleServices } from '../services';

/** Overview: the numbers an operator looks at first. */
export async function overviewPage(ctx: PageContext, services: ConsoleServices, _now: Date): Promise<Html> {
  const dlqDepth = await services.dlqDepth();
  return page(
    ctx,
    'Overview',
    '/',
    html`<section class="tiles">
  <div class="tile"><span class="label">DLQ depth</span><span class="value" id="dlq-depth">${dlqDepth}</span></div>
</section>
${table(['what', 'value'], [['dead-letter queue', dlqDepth]])}`,
  );
}
