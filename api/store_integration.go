package api

import (
	"context"
	"time"

	"github.com/google/uuid"

	"wds/apikeys"
	"wds/ingest"
	"wds/models"
	"wds/views"
)

// The Integration API's side of dbStore: key checks, the shared rate limit, idempotency and ingest.

func (s *dbStore) AuthenticateIntegration(ctx context.Context, token string, now time.Time) (*models.IntegrationKey, error) {
	return apikeys.AuthenticateIntegration(ctx, s.db, token, now)
}

func (s *dbStore) SigningSecret(k *models.IntegrationKey) ([]byte, error) {
	return apikeys.SigningSecret(s.box, k)
}

func (s *dbStore) AllowRequest(ctx context.Context, keyID uuid.UUID, limit int, now time.Time) (bool, error) {
	return s.limiter.Allow(ctx, keyID, limit, now)
}

func (s *dbStore) ClaimIdempotency(ctx context.Context, keyID uuid.UUID, key string, request []byte, now func() time.Time) (*ingest.Claim, *ingest.Replay, error) {
	return ingest.ClaimIdempotency(ctx, s.db, keyID, key, request, now)
}

func (s *dbStore) CreateOrder(ctx context.Context, key *models.IntegrationKey, in ingest.Order) (*ingest.OrderResult, error) {
	return ingest.CreateOrder(ctx, s.db, key, in)
}

func (s *dbStore) RecordPayment(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID, in ingest.Payment) (*ingest.PaymentResult, error) {
	return ingest.RecordPayment(ctx, s.db, key, orderID, in)
}

func (s *dbStore) CancelOrder(ctx context.Context, key *models.IntegrationKey, orderID uuid.UUID) (*ingest.CancelResult, error) {
	return ingest.CancelOrder(ctx, s.db, key, orderID)
}

func (s *dbStore) RefundPayment(ctx context.Context, key *models.IntegrationKey, paymentID uuid.UUID, in ingest.Refund) (*ingest.RefundResult, error) {
	return ingest.RefundPayment(ctx, s.db, key, paymentID, in)
}

func (s *dbStore) UpsertClient(ctx context.Context, key *models.IntegrationKey, in ingest.Client) (*ingest.ClientResult, error) {
	return ingest.UpsertClient(ctx, s.db, key, in)
}

func (s *dbStore) ApplyStoreOrder(ctx context.Context, key *models.IntegrationKey, in ingest.StoreOrder) (*ingest.StoreResult, error) {
	return ingest.ApplyStoreOrder(ctx, s.db, key, in)
}

func (s *dbStore) OrderByExternal(ctx context.Context, key *models.IntegrationKey, externalID string) (*views.Order, error) {
	return ingest.OrderByExternal(ctx, s.db, key, externalID)
}
