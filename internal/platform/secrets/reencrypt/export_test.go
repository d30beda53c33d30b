package reencrypt

// SetBatchSize makes tests walk several batches with a handful of rows.
func SetBatchSize(n int) { batchSize = n }
