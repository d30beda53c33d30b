// Package delivery owns outbound webhook delivery end to end, the way Temporal's reference order app
// (github.com/temporalio/reference-app-orders-go, app/order/) keeps an order's workflows, activities,
// worker registration and starter together:
//
//   - rows.go: the engine's rows (Endpoint, Delivery, Dispatch, Event) and status.go: the one
//     vocabulary of a delivery's status (Status, WorkflowStatus, the support desk's Outcome);
//   - outbox.go: WriteEvents, the one writer of event rows (test events included), in the business
//     change's own transaction; each body is a webhook.Event, the type receivers decode;
//   - endpoints.go, deliveries.go: endpoint management, the delivery log, re-fires and test events,
//     which the Operator API, the console and `wds admin` call;
//   - starter.go: starting workflows for committed events and queued starts, after commit or from
//     the relay;
//   - contract.go: task queue, type names, signal, search attributes, and the workflows' inputs and
//     results;
//   - workflow.go: the deterministic workflows, one per event fanning out to one retry chain per
//     endpoint, one per re-fire, one per test event;
//   - activities.go, deliver.go: what the workflows ask of the outside world, above all the signed
//     POST of one attempt and its row;
//   - worker.go: registration, the worker process, the relay loop and pruning (retention.go).
//
// Workflows carry ids only: the Deliver activity loads the body from PostgreSQL (Temporal caps a
// payload at 2 MiB; events may be 6 MB). Each endpoint gets a retry chain of durable timers anchored
// on its first attempt, so a restart loses no retry. Event types themselves are package events' catalog.
package delivery
