package openapi

var integration = &doc{name: "integration.yaml"}

// IntegrationJSON is the Integration API description as JSON.
func IntegrationJSON() []byte { integration.load(); return integration.json }
