package delivery

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/deliverylog"
	"wds/models"
)

// StoredRedaction counts what RedactStored read and changed.
type StoredRedaction struct {
	Endpoints int64 `json:"endpoints"`
	// Unreadable counts endpoints whose secret or headers no configured key opens (their answers are
	// left as they are): run wds admin secrets reencrypt with the previous key, then this again.
	Unreadable int64 `json:"endpoints_unreadable"`
	Read       int64 `json:"answers_read"`
	Redacted   int64 `json:"answers_redacted"`
}

// RedactStored applies Redact to every receiver's answer already stored, endpoint by endpoint, with
// the endpoint's current header values and signing secrets. Attempts recorded by a release before
// the excerpt was redacted at the source keep a receiver's echo of those values, which members
// read; this is what an operator runs once after upgrading from such a release. A value changed
// since the attempt is not known any more and stays. Each endpoint's rows are read batch rows at a
// time in the order of its log's index and a row is written only when its excerpt changes, so a
// second run writes nothing.
func RedactStored(ctx context.Context, db *gorm.DB, box models.Sealer, batch int) (StoredRedaction, error) {
	var out StoredRedaction
	var after uuid.UUID
	for {
		var eps []models.Endpoint
		if err := db.WithContext(ctx).Unscoped().Where("id > ?", after).Order("id").Limit(batch).Find(&eps).Error; err != nil {
			return out, fmt.Errorf("redact stored answers: list endpoints: %w", err)
		}
		for i := range eps {
			out.Endpoints++
			custom, keys, err := sealedValues(box, &eps[i])
			if err != nil {
				out.Unreadable++ // one endpoint sealed under a key not given must not stop the others
				continue
			}
			if len(custom) == 0 && len(keys) == 0 {
				continue
			}
			if err := redactEndpoint(ctx, db, eps[i].ID, custom, keys, batch, &out); err != nil {
				return out, fmt.Errorf("redact stored answers of endpoint %s: %w", eps[i].ID, err)
			}
		}
		if len(eps) < batch {
			return out, nil
		}
		after = eps[len(eps)-1].ID
	}
}

// sealedValues opens an endpoint's custom header values and signing secrets (current and previous).
func sealedValues(box models.Sealer, ep *models.Endpoint) (map[string]string, []string, error) {
	h, err := models.OpenHeaders(box, ep.Headers, ep.HeadersSealed)
	if err != nil {
		return nil, nil, err
	}
	var keys []string
	for _, sealed := range [][]byte{ep.SecretSealed, ep.PreviousSecretSealed} {
		if sealed == nil {
			continue
		}
		k, err := box.Open(sealed)
		if err != nil {
			return nil, nil, fmt.Errorf("open signing secret: %w", err)
		}
		keys = append(keys, string(k))
	}
	return h, keys, nil
}

// endOfTime is after every attempt, where a walk of the log newest first starts.
var endOfTime = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// redactBatchSQL reads an endpoint's next batch of stored answers of one event type and status,
// newest first: one range of the log's index, webhook_deliveries_endpoint_type.
const redactBatchSQL = `SELECT id, attempted_at, response_excerpt FROM webhook_deliveries
	WHERE endpoint_id = ? AND event_type = ? AND status = ? AND (attempted_at, id) < (?, ?) AND response_excerpt <> ''
	ORDER BY attempted_at DESC, id DESC LIMIT ?`

// redactEndpoint walks one endpoint's attempts of each event type its log holds and each status,
// newest first, and rewrites the excerpts Redact changes.
func redactEndpoint(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, custom map[string]string, keys []string,
	batch int, out *StoredRedaction) error {
	types, err := deliverylog.EndpointTypes(ctx, db, endpointID)
	if err != nil {
		return err
	}
	for _, typ := range types {
		for _, status := range models.Recorded {
			if err := redactRange(ctx, db, endpointID, typ, status, custom, keys, batch, out); err != nil {
				return err
			}
		}
	}
	return nil
}

// redactRange rewrites the excerpts Redact changes among the endpoint's attempts of one type and
// status, batch rows at a time.
func redactRange(ctx context.Context, db *gorm.DB, endpointID uuid.UUID, typ string, status models.Status,
	custom map[string]string, keys []string, batch int, out *StoredRedaction) error {
	at, id := endOfTime, uuid.Max
	for {
		var rows []struct {
			ID              uuid.UUID
			AttemptedAt     time.Time
			ResponseExcerpt string
		}
		err := db.WithContext(ctx).Raw(redactBatchSQL, endpointID, typ, status, at, id, batch).Scan(&rows).Error
		if err != nil {
			return fmt.Errorf("read attempts: %w", err)
		}
		for _, r := range rows {
			out.Read++
			if red := Redact(r.ResponseExcerpt, custom, keys); red != r.ResponseExcerpt {
				err := db.WithContext(ctx).Exec(`UPDATE webhook_deliveries SET response_excerpt = ? WHERE id = ?`, red, r.ID).Error
				if err != nil {
					return fmt.Errorf("rewrite attempt %s: %w", r.ID, err)
				}
				out.Redacted++
			}
		}
		if len(rows) < batch {
			return nil
		}
		at, id = rows[len(rows)-1].AttemptedAt, rows[len(rows)-1].ID
	}
}
