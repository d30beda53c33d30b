package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"gorm.io/gorm"

	"wds/internal/events"
	"wds/internal/platform/database"
	"wds/internal/platform/paging"
	"wds/models"
)

// ClientResult answers POST /clients (docs/integration-api.md).
type ClientResult struct {
	ID         uuid.UUID `json:"id"`
	ExternalID string    `json:"external_id"`
	Created    bool      `json:"created"`
	Updated    bool      `json:"updated"`
}

// UpsertClient creates or updates a CRM client of the key's store by the three resolution rules.
func (s *Service) UpsertClient(ctx context.Context, key *models.IntegrationKey, in Client) (*ClientResult, error) {
	if err := in.normalize("", true); err != nil {
		return nil, err
	}
	var res *ClientResult
	err := s.inTx(ctx, key, func(o *op) error {
		c, err := o.resolveClient(in)
		if err != nil {
			return err
		}
		res = &ClientResult{ID: c.id, ExternalID: in.ExternalID, Created: c.created, Updated: c.updated}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("upsert client: %w", err)
	}
	return res, nil
}

// resolved is the outcome of client resolution: the row as written when it was (nil when unchanged).
type resolved struct {
	id               uuid.UUID
	created, updated bool
	client           *ClientView
}

// resolveClient applies the client resolution rules (docs/integration-api.md) and writes client.created or (when a
// stored field changed) client.updated:
//  1. an external_id this key sent before names its client;
//  2. otherwise a client of the same store with the same email (case-insensitive) is adopted: it gets
//     the external_id and, unless another integration already imported it, this key's source stamp;
//  3. otherwise a new client is created with the source stamp.
func (o *op) resolveClient(in Client) (resolved, error) {
	id, err := o.knownClient(in.ExternalID, deref(in.Email))
	if err != nil {
		return resolved{}, err
	}
	return o.resolveFrom(in, id)
}

// resolveFrom goes on from rule 1's lookup, made with the email's lock held (knownClient, or the
// order's claim, claimOrderSQL).
func (o *op) resolveFrom(in Client, known uuid.NullUUID) (resolved, error) {
	if known.Valid {
		return o.updateClient(known.UUID, in)
	}
	return o.createClient(in)
}

// knownClient looks up the client this key's external id names (rule 1). With an email, the same
// statement first takes a lock on (store, email), held to commit, so two concurrent requests for one
// new email cannot both miss and both create: the second waits, and its next statement (a new
// snapshot) finds the first one's client. The lock is taken even when the external id is known; it
// only orders requests for one email.
func (o *op) knownClient(externalID, email string) (uuid.NullUUID, error) {
	if email == "" {
		if externalID == "" {
			return uuid.NullUUID{}, nil
		}
		id, err := o.lookupRef(entityClient, externalID)
		if isNotFound(err) {
			return uuid.NullUUID{}, nil
		}
		return uuid.NullUUID{UUID: id, Valid: err == nil}, err
	}
	var ids []uuid.NullUUID
	err := o.tx.Raw(`SELECT (`+clientRefLookup+`) AS id FROM (SELECT pg_advisory_xact_lock(hashtextextended(?, 0))) AS email_lock`,
		append(o.clientRefArgs(externalID), o.emailLock(email))...).Find(&ids).Error
	if err != nil {
		return uuid.NullUUID{}, fmt.Errorf("lock client email: %w", err)
	}
	if len(ids) != 1 {
		return uuid.NullUUID{}, nil
	}
	return ids[0], nil
}

// clientRefLookup finds the client an external id of the op's key names, if the id is not empty;
// its arguments are clientRefArgs.
const clientRefLookup = lookupSQL + ` AND ? <> ''`

func (o *op) clientRefArgs(externalID string) []any {
	return append(o.ref(entityClient, externalID).lookupArgs(), externalID)
}

// emailLock is the advisory lock's name for an email of the op's store.
func (o *op) emailLock(email string) string {
	return o.store.String() + "/" + strings.ToLower(email)
}

// clientByEmail finds the store's oldest client with this email; the caller holds the email's lock.
func (o *op) clientByEmail(email string) (uuid.UUID, bool, error) {
	var ids []uuid.UUID
	err := o.tx.Raw(`SELECT id FROM clients WHERE store_id = ? AND lower(email) = lower(?)
		ORDER BY created_at, id LIMIT 1`, o.store, email).Find(&ids).Error
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("match client by email: %w", err)
	}
	if len(ids) == 0 {
		return uuid.Nil, false, nil
	}
	return ids[0], true, nil
}

// adoptClient attaches the external_id to an email-matched client (rule 2).
func (o *op) adoptClient(id uuid.UUID, in Client) (resolved, error) {
	if in.ExternalID != "" {
		got, _, err := o.claimRef(entityClient, in.ExternalID, id)
		if err != nil {
			return resolved{}, err
		}
		id = got // a concurrent request may have attached this external_id first
	}
	return o.updateClient(id, in)
}

// createClient makes a new client (rule 3) unless the store has one with the email (rule 2). Its
// external_id is claimed in the statement that inserts it. When nothing is inserted, either the
// email matched, and that client is adopted, or a concurrent request claimed the external id
// meanwhile, and this one updates that request's client instead of making a second. The common
// case, a new client, is one statement. If neither is found by the time it looks (the matched
// client's email was changed in between: the update holds the new email's lock, not this one's),
// nothing stands in the way any more and it inserts again, a few times at most.
func (o *op) createClient(in Client) (resolved, error) {
	for range maxClientInserts {
		created, err := o.insertClient(in)
		if err != nil {
			return resolved{}, err
		}
		if created != nil {
			return *created, nil
		}
		r, found, err := o.existingClient(in)
		if err != nil || found {
			return r, err
		}
	}
	return resolved{}, fmt.Errorf("create client: the store's client with this email changed %d times meanwhile", maxClientInserts)
}

// maxClientInserts bounds createClient's tries; each retry needs another concurrent email change.
const maxClientInserts = 3

// insertClient inserts the client and writes client.created, unless the email matched or the
// external id was claimed meanwhile (nil, nil).
func (o *op) insertClient(in Client) (*resolved, error) {
	id := uuid.New()
	query, args, err := o.clientInsert(in, id, "true")
	if err != nil {
		return nil, err
	}
	c, err := WriteClient(o.ctx, o.tx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("insert client: %w", err)
	}
	return o.insertedClient(c)
}

// insertedClient writes client.created for c, the client an insert wrote, if any (nil: none).
func (o *op) insertedClient(c *ClientView) (*resolved, error) {
	if c == nil {
		return nil, nil
	}
	if err := o.emit(events.ClientCreated, c); err != nil {
		return nil, err
	}
	return &resolved{id: c.ID, created: true, client: c}, nil
}

// clientInsert is insertClient's statement for a client of this id, which inserts nothing unless
// only (an SQL condition with onlyArgs) holds as well.
func (o *op) clientInsert(in Client, id uuid.UUID, only string, onlyArgs ...any) (string, []any, error) {
	var row clientState
	row.apply(in)
	row.stamp(o.key, in.ExternalID)
	if row.DisplayName == "" {
		row.DisplayName = defaultDisplayName(row)
	}
	addr, err := row.addressJSON()
	if err != nil {
		return "", nil, err
	}
	email := deref(in.Email)
	// Without an external id there is nothing to claim, and without an email nothing to match: those
	// CTEs are then empty and the row is inserted.
	return `WITH email_match AS (
		SELECT 1 FROM clients WHERE store_id = ? AND lower(email) = lower(?) AND ? <> '' LIMIT 1),
	ref AS (` + claimSQL(`WHERE ? <> '' AND NOT EXISTS (SELECT 1 FROM email_match) AND `+only) + `)
	INSERT INTO clients AS t (id, org_id, store_id, email, display_name, first_name, last_name, phone,
		client_type, tags, billing_address, source_label, source_external_id, source_integration_key_id)
	SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?
	WHERE NOT EXISTS (SELECT 1 FROM email_match) AND (? = '' OR EXISTS (SELECT 1 FROM ref)) AND ` + only,
		slices.Concat([]any{o.store, email, email},
			o.ref(entityClient, in.ExternalID).claimArgs(id), []any{in.ExternalID}, onlyArgs,
			[]any{id, o.org, o.store, row.Email, row.DisplayName, row.FirstName, row.LastName, row.Phone, row.ClientType,
				database.Array(row.Tags), addr, row.SourceLabel, row.SourceExternalID, database.NullableID(row.SourceIntegrationKeyID),
				in.ExternalID}, onlyArgs), nil
}

// existingClient resolves a client insertClient did not insert: the store's client with the email
// (rule 2) or the one a concurrent request created under the external id. found is false when
// there is neither.
func (o *op) existingClient(in Client) (r resolved, found bool, err error) {
	if email := deref(in.Email); email != "" {
		id, ok, err := o.clientByEmail(email)
		if err != nil {
			return resolved{}, false, err
		}
		if ok {
			r, err := o.adoptClient(id, in)
			return r, true, err
		}
	}
	if in.ExternalID == "" {
		return resolved{}, false, nil
	}
	winner, err := o.lookupRef(entityClient, in.ExternalID)
	if isNotFound(err) {
		return resolved{}, false, nil
	}
	if err != nil {
		return resolved{}, false, err
	}
	r, err = o.updateClient(winner, in)
	return r, true, err
}

// updateClient overwrites the fields the caller sent (and stamps the source if the client has none);
// only a real change writes the row and emits client.updated.
func (o *op) updateClient(id uuid.UUID, in Client) (resolved, error) {
	var rows []clientState
	err := o.tx.Raw(`SELECT email, display_name, first_name, last_name, phone, client_type, tags,
		billing_address, source_label, source_external_id, source_integration_key_id
		FROM clients WHERE id = ? AND org_id = ? AND store_id = ? FOR UPDATE`, id, o.org, o.store).
		Find(&rows).Error
	if err != nil {
		return resolved{}, fmt.Errorf("load client: %w", err)
	}
	if len(rows) == 0 {
		return resolved{}, notFound("client", id)
	}
	before := rows[0]
	if err := before.decodeAddress(); err != nil {
		return resolved{}, err
	}
	after := before
	after.Tags = slices.Clone(before.Tags)
	after.apply(in)
	if after.SourceIntegrationKeyID == nil {
		after.stamp(o.key, in.ExternalID)
	}
	if after.equal(before) {
		return resolved{id: id}, nil
	}
	addr, err := after.addressJSON()
	if err != nil {
		return resolved{}, err
	}
	c, err := WriteClient(o.ctx, o.tx, `UPDATE clients t SET email = ?, display_name = ?, first_name = ?,
		last_name = ?, phone = ?, client_type = ?, tags = ?, billing_address = ?, source_label = ?,
		source_external_id = ?, source_integration_key_id = ? WHERE id = ?`,
		after.Email, after.DisplayName, after.FirstName, after.LastName, after.Phone, after.ClientType,
		database.Array(after.Tags), addr, after.SourceLabel, after.SourceExternalID, after.SourceIntegrationKeyID, id)
	if err != nil {
		return resolved{}, fmt.Errorf("update client: %w", err)
	}
	if c == nil { // the row was locked above in this transaction, so it cannot have gone
		return resolved{}, notFound("client", id)
	}
	if err := o.emit(events.ClientUpdated, c); err != nil {
		return resolved{}, err
	}
	return resolved{id: id, updated: true, client: c}, nil
}

// clientState is a stored client as an upsert sees it: its row (updateClient loads only the fields
// an upsert may change) and its billing address decoded, for comparison.
type clientState struct {
	models.Client
	address *Address `gorm:"-"`
}

// apply overwrites the fields the caller sent.
func (r *clientState) apply(in Client) {
	if in.Email != nil {
		r.Email = nil
		if *in.Email != "" {
			e := *in.Email
			r.Email = &e
		}
	}
	setIf(&r.DisplayName, in.DisplayName)
	setIf(&r.FirstName, in.FirstName)
	setIf(&r.LastName, in.LastName)
	setIf(&r.Phone, in.Phone)
	setIf(&r.ClientType, in.ClientType)
	if r.ClientType == "" {
		r.ClientType = defaultClientType
	}
	if in.Tags != nil {
		r.Tags = slices.Clone(in.Tags)
	}
	if r.Tags == nil {
		r.Tags = models.TextArray{}
	}
	if in.BillingAddress != nil {
		a := *in.BillingAddress
		r.address = &a
	}
	if in.clearAddress {
		r.address = nil
	}
}

// stamp records which integration brought the client in (the UI's "imported" badge). An operator's
// write in the app (no key) stamps nothing.
func (r *clientState) stamp(key *models.IntegrationKey, externalID string) {
	if key == nil {
		return
	}
	label, kid := key.Label, key.ID
	r.SourceLabel, r.SourceIntegrationKeyID = &label, &kid
	r.SourceExternalID = nil
	if externalID != "" {
		ext := externalID
		r.SourceExternalID = &ext
	}
}

func (r *clientState) decodeAddress() error {
	if len(r.BillingAddress) == 0 {
		return nil
	}
	var a Address
	if err := json.Unmarshal(r.BillingAddress, &a); err != nil {
		return fmt.Errorf("decode billing address: %w", err)
	}
	r.address = &a
	return nil
}

func (r *clientState) addressJSON() (*string, error) {
	if r.address == nil {
		return nil, nil
	}
	b, err := json.Marshal(r.address)
	if err != nil {
		return nil, fmt.Errorf("encode billing address: %w", err)
	}
	s := string(b)
	return &s, nil
}

// equal compares what an update could change.
func (r clientState) equal(o clientState) bool {
	return ptrEqual(r.Email, o.Email) &&
		r.DisplayName == o.DisplayName && r.FirstName == o.FirstName && r.LastName == o.LastName &&
		r.Phone == o.Phone && r.ClientType == o.ClientType && slices.Equal(r.Tags, o.Tags) &&
		ptrEqual(r.address, o.address) && ptrEqual(r.SourceLabel, o.SourceLabel) &&
		ptrEqual(r.SourceExternalID, o.SourceExternalID) && ptrEqual(r.SourceIntegrationKeyID, o.SourceIntegrationKeyID)
}

func defaultDisplayName(r clientState) string {
	if n := strings.TrimSpace(r.FirstName + " " + r.LastName); n != "" {
		return n
	}
	return deref(r.Email)
}

func setIf(dst *string, v *string) {
	if v != nil {
		*dst = *v
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func ptrEqual[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// ClientView is a client as the APIs and webhook events show it, read from its row (models.Client).
type ClientView struct {
	ID             uuid.UUID       `json:"id"`
	StoreID        uuid.UUID       `json:"store_id"`
	Email          *string         `json:"email"`
	DisplayName    string          `json:"display_name"`
	FirstName      string          `json:"first_name"`
	LastName       string          `json:"last_name"`
	Phone          string          `json:"phone"`
	ClientType     string          `json:"client_type"`
	Tags           []string        `json:"tags"`
	BillingAddress json.RawMessage `json:"billing_address"`
	Source         *ClientSource   `json:"source"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

// ClientSource is stamped on clients created from an integration.
type ClientSource struct {
	Label            *string    `json:"label"`
	ExternalID       *string    `json:"external_id"`
	IntegrationKeyID *uuid.UUID `json:"integration_key_id"`
}

// clientColumns are a client's view, of the clients table named t.
const clientColumns = `t.id, t.store_id, t.email, t.display_name, t.first_name, t.last_name, t.phone,
	t.client_type, t.tags, t.billing_address, t.source_label, t.source_external_id,
	t.source_integration_key_id, t.created_at, t.updated_at`

const clientSelect = `SELECT ` + clientColumns + ` FROM clients t`

// clientView is the client r as GetClient shows it.
func clientView(r models.Client) ClientView {
	c := ClientView{ID: r.ID, StoreID: r.StoreID, Email: r.Email, DisplayName: r.DisplayName, FirstName: r.FirstName,
		LastName: r.LastName, Phone: r.Phone, ClientType: r.ClientType, Tags: []string(r.Tags),
		BillingAddress: json.RawMessage(r.BillingAddress), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC()}
	if c.Tags == nil {
		c.Tags = []string{}
	}
	if len(c.BillingAddress) == 0 {
		c.BillingAddress = json.RawMessage("null")
	}
	if r.SourceLabel != nil || r.SourceIntegrationKeyID != nil {
		c.Source = &ClientSource{Label: r.SourceLabel, ExternalID: r.SourceExternalID, IntegrationKeyID: r.SourceIntegrationKeyID}
	}
	return c
}

// GetClient loads one client within scope.
func GetClient(ctx context.Context, db *gorm.DB, s paging.Scope, id uuid.UUID) (*ClientView, error) {
	cond, args := paging.ScopeFilter(s, "t.org_id", "t.store_id")
	row, err := paging.One[models.Client](ctx, db, "client", clientSelect+" WHERE t.id = ? AND "+cond, append([]any{id}, args...)...)
	if err != nil {
		return nil, err
	}
	c := clientView(*row)
	return &c, nil
}

// WriteClient runs write, an INSERT or UPDATE of one client that names the table t (INSERT INTO
// clients AS t, UPDATE clients t), and returns the row it wrote as GetClient shows it, or nil when it
// wrote none. A write that announces the client so needs no second statement to read it back.
func WriteClient(ctx context.Context, db *gorm.DB, write string, args ...any) (*ClientView, error) {
	var rows []models.Client
	if err := db.WithContext(ctx).Raw(write+ClientReturning, args...).Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("write client: %w", err)
	}
	if len(rows) == 0 {
		return nil, nil
	}
	c := clientView(rows[0])
	return &c, nil
}

// ClientReturning is the RETURNING clause of a client write sent without WriteClient (in a batch):
// ScanClient reads its row.
const ClientReturning = " RETURNING " + clientColumns

// ScanClient reads a row of ClientReturning as GetClient shows the client.
func ScanClient(row database.Row) (*ClientView, error) {
	var r models.Client
	var tags []string
	err := row.Scan(&r.ID, &r.StoreID, &r.Email, &r.DisplayName, &r.FirstName, &r.LastName, &r.Phone,
		&r.ClientType, &tags, &r.BillingAddress, &r.SourceLabel, &r.SourceExternalID,
		&r.SourceIntegrationKeyID, &r.CreatedAt, &r.UpdatedAt)
	if err != nil {
		return nil, fmt.Errorf("scan client: %w", err)
	}
	r.Tags = tags
	c := clientView(r)
	return &c, nil
}

// ListClients loads one page of clients.
func ListClients(ctx context.Context, db *gorm.DB, q paging.ListQuery) (paging.Page[ClientView], error) {
	tail, args := paging.Keyset(q, "t.org_id", "t.store_id")
	var rows []models.Client
	if err := db.WithContext(ctx).Raw(clientSelect+tail, args...).Find(&rows).Error; err != nil {
		return paging.Page[ClientView]{}, fmt.Errorf("list clients: %w", err)
	}
	out := make([]ClientView, len(rows))
	for i, r := range rows {
		out[i] = clientView(r)
	}
	return paging.FitPage(out, q.Limit, func(c ClientView) (time.Time, uuid.UUID) { return c.UpdatedAt, c.ID }), nil
}
