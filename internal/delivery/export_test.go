package delivery

import "wds/models"

// HealthSQL is the endpoint list's health query, for the plan test.
const HealthSQL = healthSQL

// OrgRecoveriesSQL counts an org's running recoveries, for the plan test.
const OrgRecoveriesSQL = orgRecoveriesSQL

// BatchSQL is a recovery batch's query and its parameters, for the plan test.
func BatchSQL(rec *models.Recovery, n int) (string, map[string]any) {
	return batchSQL, batchArgs(rec, n)
}

// RedactBatchSQL reads a batch of an endpoint's stored answers of one type and status, for the plan
// test.
const RedactBatchSQL = redactBatchSQL

// DropPendingSQL drops an endpoint's waiting chains, for the plan test.
var DropPendingSQL = dropWaitingSQL("endpoint_id")
