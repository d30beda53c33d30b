// Package dispatch starts the webhook workflows of committed rows, for every process that writes
// them: the Starter's after-commit starts (events, resends and re-fires, recoveries), the outbox
// relay that leases and starts what could not start at once, and the notifications by which a
// process without a Temporal client (`wds admin`) hands its queued starts to the workers.
package dispatch
