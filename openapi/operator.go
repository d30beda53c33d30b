package openapi

var operator = &doc{name: "operator.yaml"}

// OperatorYAML is the Operator API description as written.
func OperatorYAML() []byte { operator.load(); return operator.yaml }

// OperatorJSON is the Operator API description as JSON.
func OperatorJSON() []byte { operator.load(); return operator.json }
