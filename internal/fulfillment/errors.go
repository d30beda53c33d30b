package fulfillment

import "wds/internal/platform/problem"

// ErrOrderNotShippable is a shipment asked of an order that was cancelled or refunded. It unwraps to
// its problem category, which gives its HTTP status, and carries its code.
var ErrOrderNotShippable = problem.New(problem.Conflict, "order_not_shippable", "a cancelled or refunded order cannot be shipped")
