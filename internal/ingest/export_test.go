package ingest

// ClientSelect is the client list's query, for the plan test.
const ClientSelect = clientSelect
