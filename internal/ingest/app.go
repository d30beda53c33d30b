package ingest

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/order"
	"wds/internal/platform/paging"
	"wds/internal/platform/problem"
	"wds/internal/workspace"
	"wds/models"
)

// Operator writes in the app (docs/cli.md, Workspace operations): orders made by hand (source kind app) and clients
// added or edited by an operator. They go through the same rules as integration writes (totals,
// status, payment, client fields, client resolution, events); what differs is who writes. An
// operator has no integration key, so an app write claims no external_refs and stamps no source:
// external ids belong to keys. Any member of the org may make them; each is audit logged.

// appOp is an op of an operator working in one store of an org.
func appOp(ctx context.Context, org, store uuid.UUID) func(tx *gorm.DB) *op {
	return func(tx *gorm.DB) *op { return &op{ctx: ctx, tx: tx, org: org, store: store} }
}

// CreateAppOrder makes an order by hand in one of the org's stores. It is the integration create
// (checkCreate, createOrder), except that external_id is optional and, when given, unique among the
// org's app orders: a repeat answers the original with Duplicate set, changes nothing and emits
// nothing, even when it names another store. The client block is matched by email within the store
// (its external_id is ignored), else it makes a new client; an inline payment's external_id is
// ignored too.
func (s *Service) CreateAppOrder(ctx context.Context, orgID, actorID uuid.UUID, in AppOrder) (*OrderResult, error) {
	if err := workspace.RequireRole(ctx, s.db, orgID, actorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	storeID, err := requiredID("store_id", in.StoreID)
	if err != nil {
		return nil, err
	}
	c, err := checkCreate(in.Order, byOperator)
	if err != nil {
		return nil, err
	}
	if _, err := workspace.StoreOf(ctx, s.db, orgID, storeID); err != nil {
		return nil, err
	}
	var res *OrderResult
	err = s.run(ctx, appOp(ctx, orgID, storeID), func(o *op) error {
		var err error
		if res, err = o.createOrder(c); err != nil || res.Duplicate {
			return err
		}
		return o.audit(actorID, "order.create", "order", res.ID, map[string]any{"store_id": storeID,
			"number": res.Number, "external_id": c.ExternalID, "total_cents": res.TotalCents, "status": res.Status})
	})
	// A concurrent create of the same external_id committed first: the index refused this one's
	// order and the whole attempt rolled back, so answer the original.
	if errors.Is(err, errExternalIDTaken) {
		return appOrderByExternal(ctx, s.db, orgID, c.ExternalID)
	}
	if err != nil {
		return nil, fmt.Errorf("create app order: %w", err)
	}
	return res, nil
}

// appOrderByExternal answers a repeated app order create with the original.
func appOrderByExternal(ctx context.Context, db *gorm.DB, orgID uuid.UUID, externalID string) (*OrderResult, error) {
	var ids []uuid.UUID
	err := db.WithContext(ctx).Raw(`SELECT id FROM orders WHERE org_id = ? AND source_kind = 'app' AND external_id = ?`,
		orgID, externalID).Find(&ids).Error
	if err != nil {
		return nil, fmt.Errorf("load app order by external_id: %w", err)
	}
	if len(ids) == 0 { // the index said taken, so this cannot be; fail loudly rather than create twice
		return nil, fmt.Errorf("app order with external_id %q vanished", externalID)
	}
	v, err := order.Get(ctx, db, paging.Scope{OrgID: orgID}, ids[0])
	if err != nil {
		return nil, err
	}
	return duplicateOf(v)
}

// CreateClient adds a client to one of the org's stores and emits client.created. A client of the
// store already holding the email (case-insensitive) is a conflict: the store's clients are told
// apart by email, as order client blocks and integration upserts match them.
func (s *Service) CreateClient(ctx context.Context, orgID, actorID uuid.UUID, in NewClient) (*ClientView, error) {
	if err := workspace.RequireRole(ctx, s.db, orgID, actorID, workspace.Anyone...); err != nil {
		return nil, err
	}
	storeID, err := requiredID("store_id", in.StoreID)
	if err != nil {
		return nil, err
	}
	c, err := in.client()
	if err != nil {
		return nil, err
	}
	if _, err := workspace.StoreOf(ctx, s.db, orgID, storeID); err != nil {
		return nil, err
	}
	var out *ClientView
	err = s.run(ctx, appOp(ctx, orgID, storeID), func(o *op) error {
		if err := o.refuseTakenEmail(deref(c.Email), uuid.Nil); err != nil {
			return err
		}
		r, err := o.insertClient(c)
		if err != nil {
			return err
		}
		if r == nil { // the email's lock is held and no client had it: cannot be
			return fmt.Errorf("client with email %q appeared under its lock", deref(c.Email))
		}
		out = r.client
		return o.audit(actorID, "client.create", "client", r.id, map[string]any{"store_id": storeID, "fields": in.names()})
	})
	if err != nil {
		return nil, fmt.Errorf("create client: %w", err)
	}
	return out, nil
}

// UpdateClient edits a client: only the fields sent change, null clears one. client.updated and the
// audit row are written only when a stored field changed; an edit that changes nothing writes
// nothing. A client of an org the actor is not a member of is not found.
func (s *Service) UpdateClient(ctx context.Context, actorID, clientID uuid.UUID, in ClientFields) (*ClientView, error) {
	var homes []struct{ OrgID, StoreID uuid.UUID }
	if err := s.db.WithContext(ctx).Raw(`SELECT org_id, store_id FROM clients WHERE id = ?`, clientID).Find(&homes).Error; err != nil {
		return nil, fmt.Errorf("load client: %w", err)
	}
	if len(homes) == 0 {
		return nil, notFound("client", clientID)
	}
	org, store := homes[0].OrgID, homes[0].StoreID
	if err := workspace.RequireRowRole(ctx, s.db, org, actorID, "client", clientID, workspace.Anyone...); err != nil {
		return nil, err
	}
	c, err := in.client()
	if err != nil {
		return nil, err
	}
	var out *ClientView
	err = s.run(ctx, appOp(ctx, org, store), func(o *op) error {
		if err := o.refuseTakenEmail(deref(c.Email), clientID); err != nil {
			return err
		}
		r, err := o.updateClient(clientID, c)
		if err != nil || !r.updated {
			return err
		}
		out = r.client
		return o.audit(actorID, "client.update", "client", clientID, map[string]any{"fields": in.names()})
	})
	if err != nil {
		return nil, fmt.Errorf("update client: %w", err)
	}
	if out == nil { // nothing changed
		if out, err = GetClient(ctx, s.db, paging.Scope{OrgID: org}, clientID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// refuseTakenEmail takes the store's lock on email (held to commit, as every client write to that
// email does) and refuses it when another client of the store holds it and client (uuid.Nil for a
// new one) does not already: an edit that keeps a client's email is never refused. No email, no
// check.
func (o *op) refuseTakenEmail(email string, client uuid.UUID) error {
	if email == "" {
		return nil
	}
	if _, err := o.knownClient("", email); err != nil { // with no external id it only takes the lock
		return err
	}
	var ids []uuid.UUID
	err := o.tx.Raw(`SELECT id FROM clients WHERE store_id = ? AND lower(email) = lower(?) AND id <> ?
		AND NOT EXISTS (SELECT 1 FROM clients WHERE id = ? AND lower(email) = lower(?)) LIMIT 1`,
		o.store, email, client, client, email).Find(&ids).Error
	if err != nil {
		return fmt.Errorf("check client email: %w", err)
	}
	if len(ids) > 0 {
		return problem.Fail(problem.Conflict, "client %s of this store already has the email %s", ids[0], email)
	}
	return nil
}

// audit writes the op's audit row in its transaction.
func (o *op) audit(actorID uuid.UUID, action, targetType string, targetID uuid.UUID, details map[string]any) error {
	return workspace.Audit(o.ctx, o.tx, models.AuditEntry{OrgID: o.org, ActorID: actorID, Action: action,
		TargetType: targetType, TargetID: targetID, Details: details})
}

// auditKey writes the audit row of what the op's integration key changed, in the op's transaction,
// with the key as the actor: "who cancelled order 1017?" has an answer. An op of no key (an
// operator's, which writes its own row) writes none.
func (o *op) auditKey(action, targetType string, targetID uuid.UUID, details map[string]any) error {
	if o.key == nil {
		return nil
	}
	return workspace.AuditAct(o.ctx, o.tx, workspace.Act{OrgID: o.org, KeyID: &o.key.ID, Action: action,
		TargetType: targetType, TargetID: targetID, Details: details})
}

// requiredID parses a required UUID field of a body.
func requiredID(field string, v *string) (uuid.UUID, error) {
	if v == nil || *v == "" {
		return uuid.Nil, invalid(field, "is required")
	}
	id, err := uuid.Parse(*v)
	if err != nil {
		return uuid.Nil, invalid(field, "must be a UUID")
	}
	return id, nil
}
