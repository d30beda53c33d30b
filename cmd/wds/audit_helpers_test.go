package main

import (
	"context"
	"strings"
	"testing"

	"wds/internal/platform/database"
)

type auditRow struct {
	Action   string
	ActorID  string
	TargetID string
	Details  string
}

func auditRows(t *testing.T, url string) []auditRow {
	t.Helper()
	db, err := database.Open(context.Background(), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer database.Close(db)
	var rows []auditRow
	if err := db.Raw(`SELECT action, actor_id::text AS actor_id, target_id::text AS target_id, details::text AS details
		FROM audit_log ORDER BY created_at`).Scan(&rows).Error; err != nil {
		t.Fatal(err)
	}
	return rows
}

func containsSecret(details, secret string) bool {
	return strings.Contains(details, secret) || strings.Contains(details, secret[9:])
}
