// An integrator's program, written against the types openapi-typescript generates from wds's served
// documents (read.d.ts, integration.d.ts, operator.d.ts beside it) and compiled with TypeScript's
// strict options: no cast, no any. It walks what an integrator does, against a running wds, and exits
// non-zero at the first answer that is not what the types promise.
import createClient from "openapi-fetch";
import type { components as R, paths as ReadPaths } from "./read.js";
import type { components as I, paths as IntegrationPaths } from "./integration.js";
import type { components as O, paths as OperatorPaths } from "./operator.js";

type Order = R["schemas"]["Order"];
type OrdersQuery = NonNullable<ReadPaths["/v1/orders"]["get"]["parameters"]["query"]>;
type EventType = R["schemas"]["EventType"];
type FeedQuery = NonNullable<ReadPaths["/v1/events"]["get"]["parameters"]["query"]>;

function env(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set`);
  return v;
}

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

// must narrows an answer's data to what the types promise on success, or stops with the error.
function must<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {
  if (answer.data === undefined) throw new Error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
  return answer.data;
}

const baseUrl = env("WDS_URL");
const read = createClient<ReadPaths>({ baseUrl, headers: { Authorization: `Bearer ${env("WDS_READ_KEY")}` } });
const integration = createClient<IntegrationPaths>({ baseUrl, headers: { Authorization: `Bearer ${env("WDS_INTEGRATION_KEY")}` } });
const operator = createClient<OperatorPaths>({ baseUrl, headers: { Authorization: `Bearer ${env("WDS_OPERATOR_TOKEN")}` } });
const orgId = env("WDS_ORG_ID");
const endpointId = env("WDS_ENDPOINT_ID");
const run = Date.now().toString(36);

// Create an order with an inline payment and a client; the line's unit price defaults to 0 when left
// out, so only the quantity is required.
const line: I["schemas"]["LineInput"] = { description: "Tea", quantity: 2, unit_price_cents: 450 };
const create: I["schemas"]["OrderCreate"] = {
  external_id: `order-${run}`,
  currency: "EUR",
  lines: [line, { quantity: 1 }],
  shipping_cents: 100,
  client: { external_id: `client-${run}`, email: `${run}@example.com`, billing_address: { city: "Lyon", country: "FR" } },
  payment: { amount_cents: 500, method: "card" },
};
const created = await integration.POST("/integrations/v1/orders", { body: create, params: { header: { "Idempotency-Key": run } } });
const order = must(created, "create");
check(created.response.status === 201 && order.status === "partially_paid" && order.total_cents === 1000 && !order.duplicate, `create answered ${JSON.stringify(order)}`);

// What the server refuses does not compile: each line below is an error the compiler must report,
// or the build fails on its unused @ts-expect-error.
// @ts-expect-error a line without its quantity is 422 validation_failed
export const noQuantity: I["schemas"]["LineInput"] = { description: "Tea" };
// @ts-expect-error an inline payment without its amount is 422 validation_failed
export const noAmount: I["schemas"]["PaymentInput"] = { method: "card" };
// @ts-expect-error a recorded payment without its external_id is 422 external_id_required
export const noPaymentId: I["schemas"]["PaymentCreate"] = { amount_cents: 500 };
// @ts-expect-error a client upsert without its external_id is 422 external_id_required
export const noClientId: I["schemas"]["ClientUpsert"] = { email: "ann@example.com" };
// @ts-expect-error a misspelt event type is no event type
export const misspelt: EventType = "order.creatd";

// Record the rest of the payment, then read the order's lines and payments over the Read API.
const payment: I["schemas"]["PaymentCreate"] = { external_id: `payment-${run}`, amount_cents: 500, method: "bank_transfer" };
const paid = await integration.POST("/integrations/v1/orders/{id}/payments", { params: { path: { id: order.id } }, body: payment });
check(paid.data?.order_status === "paid" && paid.data.amount_paid_cents === 1000, `payment: ${JSON.stringify(paid.data ?? paid.error)}`);
const full: Order = must(await read.GET("/v1/orders/{id}", { params: { path: { id: order.id } } }), "order");
check(full.number === order.number && full.lines.length === 2 && full.payments.length === 2, `order: ${JSON.stringify(full)}`);
const lineTotal = full.lines.reduce((sum, l) => sum + l.total_cents, 0);
check(lineTotal === 900 && full.lines[1]?.unit_price_cents === 0, `lines: ${JSON.stringify(full.lines)}`);
const paymentIds = full.payments.filter((p) => !p.refunded).map((p) => p.id);

// Page through every order, 1 a page, following next_cursor.
let pages = 0;
let cursor: R["schemas"]["Cursor"] = null;
do {
  const query: OrdersQuery = cursor ? { limit: 1, cursor_at: cursor.at, cursor_id: cursor.id } : { limit: 1 };
  const page = must(await read.GET("/v1/orders", { params: { query } }), "orders page");
  cursor = page.next_cursor;
  pages++;
} while (cursor !== null && pages < 100);
check(pages >= 1 && cursor === null, `paged ${pages} pages`);

// Refund a payment, cancel the order, upsert the client again.
const first = paymentIds[0];
if (first === undefined) throw new Error("the order has no payment to refund");
const refunded = await integration.POST("/integrations/v1/payments/{id}/refund", { params: { path: { id: first } } });
check(refunded.data?.refunded === true && refunded.data.order_status === "partially_paid", `refund: ${JSON.stringify(refunded.data ?? refunded.error)}`);
const cancelled = await integration.POST("/integrations/v1/orders/{id}/cancel", { params: { path: { id: order.id } } });
check(cancelled.data?.status === "cancelled" && !cancelled.data.already_cancelled, `cancel: ${JSON.stringify(cancelled.data ?? cancelled.error)}`);
const client: I["schemas"]["ClientUpsert"] = { external_id: `client-${run}`, client_type: "wholesale", tags: ["vip"] };
const upserted = await integration.POST("/integrations/v1/clients", { body: client });
check(upserted.response.status === 200 && upserted.data?.updated === true, `upsert: ${JSON.stringify(upserted.data ?? upserted.error)}`);

// An error is typed: its code is one of the API's codes.
const missing = await read.GET("/v1/orders/{id}", { params: { path: { id: "00000000-0000-0000-0000-000000000000" } } });
const code: R["schemas"]["ErrorCode"] | undefined = missing.error?.error;
check(missing.response.status === 404 && code === "not_found", `missing order: ${missing.response.status} ${code}`);

// The feed has the order's events; the Operator API's search finds them by the order and resends one.
// The feed shows an event once every transaction older than it has ended (a worker's write may still
// run), so a consumer polls with next until the cancellation arrives.
const wanted: EventType[] = ["order.created", "payment.recorded", "order.cancelled"];
const feedTypes: EventType[] = [];
let after: string | undefined;
for (let polls = 0; !feedTypes.includes("order.cancelled") && polls < 100; polls++) {
  const query: FeedQuery = after === undefined ? { types: wanted, limit: 100 } : { types: wanted, limit: 100, after };
  const page = must(await read.GET("/v1/events", { params: { query }, querySerializer: { array: { style: "form", explode: false } } }), "feed");
  for (const e of page.rows) if (e.data !== null && "id" in e.data && e.data.id === order.id) feedTypes.push(e.type);
  after = page.next;
  if (page.done) await new Promise((resolve) => setTimeout(resolve, 100));
}
check(feedTypes.includes("order.created") && feedTypes.includes("order.cancelled"), `feed: ${feedTypes.join(",")}`);
const search = await operator.GET("/admin/v1/orgs/{org_id}/events", {
  params: { path: { org_id: orgId }, query: { order_number: order.number, type: "order.created" } },
});
const row: O["schemas"]["EventRow"] | undefined = must(search, "search").rows[0];
if (row === undefined) throw new Error("the search found no order.created of the order");
check(row.order_number === order.number, `search: ${JSON.stringify(row)}`);
const body = must(await operator.GET("/admin/v1/events/{id}", { params: { path: { id: row.id } } }), "event").payload;
check(body.type === "order.created" && body.id === row.id, `event body: ${JSON.stringify(body)}`);
const resent = await operator.POST("/admin/v1/events/{id}/resend", { params: { path: { id: row.id } }, body: { endpoint_id: endpointId } });
check(resent.response.status === 202 && resent.data?.chains[0]?.endpoint_id === endpointId, `resend: ${JSON.stringify(resent.data ?? resent.error)}`);

// The endpoint, read through its typed operation.
const listed = await operator.POST("/admin/v1/rpc/outbound_webhook_list", { body: { p_org_id: orgId } });
const endpoint: O["schemas"]["Endpoint"] | undefined = listed.data?.rows.find((e) => e.id === endpointId);
check(endpoint !== undefined && endpoint.enabled && endpoint.disabled_reason === null, `endpoints: ${JSON.stringify(listed.data ?? listed.error)}`);

console.log(`ok: order ${order.number} created, paid, refunded, cancelled; ${pages} pages; events ${feedTypes.join(",")}; resent to ${endpointId}`);
