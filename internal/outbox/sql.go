package outbox

// SubscribedAtEventTime is the SQL condition on webhook_endpoints aliased w for the endpoints an event
// (of org orgExpr, type typeExpr, created at createdExpr) goes to: not deleted, subscribed to the type,
// and created no later than the event, enabled or not. The outbox writes an event it matches nowhere
// already dispatched, and the starter marks such an event without a workflow; the targets themselves
// are chosen by DeliversAtEventTime.
func SubscribedAtEventTime(orgExpr, typeExpr, createdExpr string) string {
	return "w.org_id = " + orgExpr + " AND w.deleted_at IS NULL AND " + typeExpr + " = ANY(w.event_types) AND w.created_at <= " + createdExpr
}

// DeliversAtEventTime narrows SubscribedAtEventTime to the endpoints enabled now: an event's targets,
// in TargetOrder, as the starter plans them and the ResolveTargets activity looks them up.
func DeliversAtEventTime(orgExpr, typeExpr, createdExpr string) string {
	return "w.enabled AND " + SubscribedAtEventTime(orgExpr, typeExpr, createdExpr)
}

// EndpointsLock is the SQL call that takes the endpoints lock of org orgExpr for the transaction:
// shared by every event writer, exclusive while an endpoint is created, so that an event never
// misses an endpoint created before it (WriteEvents).
func EndpointsLock(orgExpr string, shared bool) string {
	fn := "pg_advisory_xact_lock"
	if shared {
		fn += "_shared"
	}
	return fn + "(hashtextextended('wds.webhook_endpoints:' || " + orgExpr + "::text, 0))"
}

// TargetOrder orders an event's targets (webhook_endpoints aliased w): oldest endpoint first.
const TargetOrder = "w.created_at, w.id"
