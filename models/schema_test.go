package models_test

import (
	"maps"
	"slices"
	"sync"
	"testing"

	"gorm.io/gorm/schema"

	"wds/models"
	"wds/test/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// tableModels is the model of every table the migrations make. A migration that adds a table adds
// its model here (and in models); one that drops a table drops it here.
var tableModels = map[string]any{
	"orgs":                      models.Org{},
	"stores":                    models.Store{},
	"users":                     models.User{},
	"memberships":               models.Membership{},
	"audit_log":                 models.AuditEntry{},
	"console_sessions":          models.ConsoleSession{},
	"read_keys":                 models.ReadKey{},
	"integration_keys":          models.IntegrationKey{},
	"external_refs":             models.ExternalRef{},
	"idempotency_keys":          models.IdempotencyKey{},
	"rate_limit_hits":           models.RateLimitHit{},
	"clients":                   models.Client{},
	"vendors":                   models.Vendor{},
	"vendor_claim_tokens":       models.VendorClaimToken{},
	"sellers":                   models.Seller{},
	"seller_links":              models.SellerLink{},
	"products":                  models.Product{},
	"orders":                    models.Order{},
	"order_lines":               models.OrderLine{},
	"payments":                  models.Payment{},
	"shipments":                 models.Shipment{},
	"events":                    models.Event{},
	"event_states":              models.EventState{},
	"webhook_endpoints":         models.Endpoint{},
	"webhook_deliveries":        models.Delivery{},
	"webhook_dispatches":        models.Dispatch{},
	"webhook_recoveries":        models.Recovery{},
	"webhook_refire_counters":   models.RefireCounter{},
	"webhook_endpoint_sends":    models.EndpointSend{},
	"webhook_endpoint_minutes":  models.EndpointMinute{},
	"webhook_unrecovered_drops": models.UnrecoveredDrop{},
	"relay_claims":              models.RelayClaim{},
}

// notColumns are fields a model reads from another table (a join), by table: GORM never writes them.
var notColumns = map[string][]string{
	// The re-fire that answered a dropped row, read from its dispatch (deliverylog.LogPage).
	"webhook_deliveries": {"refired_chain_id", "refired_workflow_id"},
}

// leftOut are columns a model deliberately does not have, by table, each with its reason. A new
// model leaves none out.
var leftOut = map[string][]string{}

// Every table of the migrated schema has its model, the model names its table, and the model and the
// table have the same columns: a migration that adds a table or a column fails here until a model
// has it.
func TestEveryTableHasItsModel(t *testing.T) {
	db := pgtest.New(t)
	var cols []struct{ TableName, ColumnName string }
	err := db.Raw(`SELECT c.table_name, c.column_name
		FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'goose_db_version'
		ORDER BY c.table_name, c.ordinal_position`).Scan(&cols).Error
	if err != nil {
		t.Fatal(err)
	}
	tables := map[string][]string{}
	for _, c := range cols {
		tables[c.TableName] = append(tables[c.TableName], c.ColumnName)
	}
	if len(tables) == 0 {
		t.Fatal("the migrated database has no tables")
	}
	for name := range tableModels {
		if tables[name] == nil {
			t.Errorf("%s has a model in tableModels but no migration makes it (or one drops it)", name)
		}
	}

	cache := &sync.Map{}
	for _, table := range slices.Sorted(maps.Keys(tables)) {
		columns := tables[table]
		model, ok := tableModels[table]
		if !ok {
			t.Errorf("table %s has no model: add one to models and to tableModels", table)
			continue
		}
		s, err := schema.Parse(model, cache, db.NamingStrategy)
		if err != nil {
			t.Errorf("%s: parse %T: %v", table, model, err)
			continue
		}
		if s.Table != table {
			t.Errorf("%T is the model of %s but GORM reads and writes it in %s", model, table, s.Table)
		}
		var fields []string
		for _, f := range s.Fields {
			if f.DBName == "" { // gorm:"-": not a column
				continue
			}
			fields = append(fields, f.DBName)
			if !slices.Contains(columns, f.DBName) && !slices.Contains(notColumns[table], f.DBName) {
				t.Errorf("%T.%s names column %s, which %s does not have", model, f.Name, f.DBName, table)
			}
		}
		for _, c := range notColumns[table] {
			if !slices.Contains(fields, c) {
				t.Errorf("notColumns lists %s.%s, which %T does not have", table, c, model)
			} else if slices.Contains(columns, c) {
				t.Errorf("notColumns lists %s.%s, which is a column of the table", table, c)
			}
		}
		for _, c := range columns {
			if !slices.Contains(fields, c) && !slices.Contains(leftOut[table], c) {
				t.Errorf("%s.%s has no field in %T", table, c, model)
			}
		}
		for _, c := range leftOut[table] {
			if slices.Contains(fields, c) || !slices.Contains(columns, c) {
				t.Errorf("leftOut lists %s.%s, which %T has or the table has not", table, c, model)
			}
		}
	}
}
