package openapi

var operator = &doc{name: "operator.yaml"}

// OperatorJSON is the Operator API description as JSON.
func OperatorJSON() []byte { operator.load(); return operator.json }
