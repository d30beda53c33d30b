package api

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"wds/apikeys"
	"wds/catalog"
	"wds/fulfillment"
	"wds/ingest"
	"wds/models"
	"wds/operator"
)

// The writes and the operator's lists of dbStore: each passes the database to its operations package.

func (s *dbStore) CreateReadKey(ctx context.Context, in apikeys.NewReadKey) (*models.ReadKey, string, error) {
	return apikeys.CreateReadKey(ctx, s.db, in)
}

// errNoBox is minting an integration key on a process without an encryption key: a deployment
// defect, so an internal error.
var errNoBox = errors.New("no encryption key is configured to seal signing secrets")

func (s *dbStore) CreateIntegrationKey(ctx context.Context, in apikeys.NewIntegrationKey) (*apikeys.CreatedIntegrationKey, error) {
	if s.box == nil {
		return nil, errNoBox
	}
	return apikeys.CreateIntegrationKey(ctx, s.db, s.box, in)
}

func (s *dbStore) RevokeReadKey(ctx context.Context, id, actorID uuid.UUID) (*models.ReadKey, error) {
	return apikeys.RevokeReadKey(ctx, s.db, id, actorID)
}

func (s *dbStore) RevokeIntegrationKey(ctx context.Context, id, actorID uuid.UUID) (*models.IntegrationKey, error) {
	return apikeys.RevokeIntegrationKey(ctx, s.db, id, actorID)
}

func (s *dbStore) ListReadKeys(ctx context.Context, q operator.Query) (operator.Page[operator.ReadKey], error) {
	return operator.ListReadKeys(ctx, s.db, q)
}

func (s *dbStore) ListIntegrationKeys(ctx context.Context, q operator.Query) (operator.Page[operator.IntegrationKey], error) {
	return operator.ListIntegrationKeys(ctx, s.db, q)
}

func (s *dbStore) ListAudit(ctx context.Context, q operator.Query) (operator.Page[operator.AuditEntry], error) {
	return operator.ListAudit(ctx, s.db, q)
}

func (s *dbStore) ListDeliveries(ctx context.Context, q operator.Query, f operator.DeliveryFilter) (operator.Page[models.Delivery], error) {
	return operator.ListDeliveries(ctx, s.db, q, f)
}

func (s *dbStore) CreateVendor(ctx context.Context, orgID, actorID, storeID uuid.UUID, in catalog.VendorFields) (*catalog.VendorResult, error) {
	return catalog.CreateVendor(ctx, s.db, orgID, actorID, storeID, in)
}

func (s *dbStore) UpdateVendor(ctx context.Context, actorID, vendorID uuid.UUID, in catalog.VendorFields) (*catalog.VendorResult, error) {
	return catalog.UpdateVendor(ctx, s.db, actorID, vendorID, in)
}

func (s *dbStore) IssueClaimToken(ctx context.Context, actorID, vendorID uuid.UUID) (*catalog.ClaimToken, error) {
	return catalog.IssueClaimToken(ctx, s.db, actorID, vendorID)
}

func (s *dbStore) ClaimVendor(ctx context.Context, in catalog.Claim) (*catalog.Claimed, error) {
	return catalog.ClaimVendor(ctx, s.db, in)
}

func (s *dbStore) ShipOrder(ctx context.Context, actor, orderID uuid.UUID, in fulfillment.Ship) (*fulfillment.Result, error) {
	return fulfillment.ShipOrder(ctx, s.db, actor, orderID, in)
}

func (s *dbStore) AddTracking(ctx context.Context, actor, shipmentID uuid.UUID, tracking string, carrier *string) (*fulfillment.Result, error) {
	return fulfillment.AddTracking(ctx, s.db, actor, shipmentID, tracking, carrier)
}

func (s *dbStore) MarkDelivered(ctx context.Context, actor, shipmentID uuid.UUID, deliveredAt *time.Time) (*fulfillment.Result, error) {
	return fulfillment.MarkDelivered(ctx, s.db, actor, shipmentID, deliveredAt)
}

func (s *dbStore) CreateAppOrder(ctx context.Context, orgID, actorID uuid.UUID, in ingest.AppOrder) (*ingest.OrderResult, error) {
	return ingest.CreateAppOrder(ctx, s.db, orgID, actorID, in)
}

func (s *dbStore) CreateClient(ctx context.Context, orgID, actorID uuid.UUID, in ingest.NewClient) (*ingest.AppClient, error) {
	return ingest.CreateClient(ctx, s.db, orgID, actorID, in)
}

func (s *dbStore) UpdateClient(ctx context.Context, actorID, clientID uuid.UUID, in ingest.ClientFields) (*ingest.AppClient, error) {
	return ingest.UpdateClient(ctx, s.db, actorID, clientID, in)
}
