// Package deliverylog is the support desk's delivery log: every attempt of an org's endpoints, one
// endpoint's or the org's, filtered and paged (log.go), one attempt with the headers it sent
// (detail.go), how the chains of attempts stand now (chain_fates.go) and the hourly counts of the
// console's charts (history.go). The attempts themselves are the delivery engine's (package
// delivery), which writes them.
package deliverylog

import (
	"gorm.io/gorm"

	"wds/internal/platform/ratelimit"
	"wds/internal/platform/secrets"
)

// Service reads the delivery log over db; box opens the custom header values an attempt sent
// (nil: the names alone), and reads paces each org's reads (paging.NewReadPacer,
// WDS_OPERATOR_READ_RATE), in turns shared with the org's other lists (nil: unpaced).
type Service struct {
	db    *gorm.DB
	box   *secrets.Box
	reads *ratelimit.Pacer
}

// NewService is the delivery log over db, opening sent headers with box and pacing reads by reads.
func NewService(db *gorm.DB, box *secrets.Box, reads *ratelimit.Pacer) *Service {
	return &Service{db: db, box: box, reads: reads}
}
