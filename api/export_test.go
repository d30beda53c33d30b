package api

import "sort"

// RPCOperationNames lists the Operator API's named operations (POST /admin/v1/rpc/<operation>), so
// the tenancy sweep can insist that each one is called with another org's ids.
func RPCOperationNames() []string {
	var names []string
	for name := range (&server{}).rpcOperations() {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
