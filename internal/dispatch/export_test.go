package dispatch

import (
	"time"

	"gorm.io/gorm"
)

// EventClaimSQL is the relay's claim of events as it runs, for plan tests.
func EventClaimSQL(db *gorm.DB, grace time.Duration, limit int) (string, []any) {
	s := &Starter{DB: db, Grace: grace}
	stmt := s.eventClaim(db.Session(&gorm.Session{DryRun: true}), limit).Find(&[]eventRow{}).Statement
	return stmt.SQL.String(), stmt.Vars
}
