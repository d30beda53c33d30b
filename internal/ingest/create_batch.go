package ingest

import (
	"context"
	"fmt"
	"slices"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"gorm.io/gorm"

	"wds/internal/order"
	"wds/internal/platform/database"
	"wds/internal/platform/problem"
	"wds/models"
)

// The first round trip of an order create (create.go): its statements, their SQL and the reading of
// their answers, kept apart from the rules that decide what to do with them.

// orderClaim is the answer of claimOrderSQL, one row.
type orderClaim struct {
	Won    bool
	Client uuid.NullUUID
	// Locks is there because the statement returns it: reading the email lock's CTE makes it run.
	Locks int64
}

// claimOrderSQL claims the order's external id for id and in the same statement does knownClient's
// work for the order's client, if any: with an email it takes the email's lock, and it looks up the
// client's external id. An integration key claims as claimRef does, in external_refs; an operator
// (app) finds whether one of the org's app orders holds the external id (appOrderLookup), and an
// empty one claims nothing and always wins. The lock is taken only once the claim is won (the CTE
// reads the claim's row), so a repeated create waits for nothing but the first one's claim, and the
// locks are taken in the order the two statements took them.
func (o *op) claimOrderSQL(externalID string, id uuid.UUID, client *Client) (string, []any) {
	var c Client
	if client != nil {
		c = *client
	}
	email := deref(c.Email)
	query, claim := claimOrderQuery, o.ref(entityOrder, externalID).claimArgs(id)
	if o.key == nil {
		query, claim = claimAppOrderQuery, []any{externalID, o.org, externalID}
	}
	return query, slices.Concat(claim, []any{o.emailLock(email), email}, o.clientRefArgs(c.ExternalID))
}

// claimedSQL is the condition each insert of the first round trip waits on, and its arguments: the
// claim of the order's external id was won. A key's claim row names this order exactly when it
// was; an operator's was won when no app order of the org holds the external id (the order's
// insert, ON CONFLICT, settles a race of two).
func (o *op) claimedSQL(externalID string, id uuid.UUID) (string, []any) {
	if o.key == nil {
		return `NOT EXISTS (` + appOrderLookup + `)`, []any{o.org, externalID}
	}
	return `EXISTS (` + lookupSQL + ` AND internal_id = ?)`, append(o.ref(entityOrder, externalID).lookupArgs(), id)
}

// appOrderLookup finds the org's app order of an external id (migrations/00009's unique index);
// its arguments are the org and the external id.
const appOrderLookup = `SELECT id FROM orders WHERE org_id = ? AND source_kind = 'app' AND external_id = ?`

// orderClaimQuery is the claim statement around claim, a query that returns a row when the claim
// is won.
func orderClaimQuery(claim string) string {
	return `WITH claim AS (` + claim + `),
	email_lock AS (
		SELECT pg_advisory_xact_lock(hashtextextended(?, 0)) FROM claim WHERE ? <> '')
	SELECT EXISTS (SELECT 1 FROM claim) AS won, (` + clientRefLookup + `) AS client,
		(SELECT count(*) FROM email_lock) AS locks -- a CTE nobody reads does not run`
}

var (
	claimOrderQuery    = orderClaimQuery(claimSQL(""))
	claimAppOrderQuery = orderClaimQuery(`SELECT 1 WHERE ? = '' OR NOT EXISTS (` + appOrderLookup + `)`)
)

// createAnswers is what the first round trip learned: the claim, and the client and order it
// inserted (nil: held back).
type createAnswers struct {
	claim  orderClaim
	client *ClientView
	order  *order.Order
}

// sendCreate sends the first round trip (createBatch) and reads its answers.
func (o *op) sendCreate(id uuid.UUID, clientID *uuid.UUID, c orderCreate) (*createAnswers, error) {
	b, err := o.createBatch(id, clientID, c)
	if err != nil {
		return nil, err
	}
	var a createAnswers
	err = database.Send(o.tx, b, func(r pgx.BatchResults) error {
		if err := r.QueryRow().Scan(&a.claim.Won, &a.claim.Client, &a.claim.Locks); err != nil {
			return fmt.Errorf("claim order external_id: %w", err)
		}
		var err error
		if c.Client != nil {
			if a.client, err = atMostOne(r, ScanClient); err != nil {
				return fmt.Errorf("insert client: %w", err)
			}
		}
		if a.order, err = atMostOne(r, scanOrder); err != nil {
			return fmt.Errorf("insert order: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// createBatch is the first round trip's statements: the claim, the client's insert (with a client)
// and the order's, each insert held back unless the claim was won and, for the order, its client
// (clientID) exists.
func (o *op) createBatch(id uuid.UUID, clientID *uuid.UUID, c orderCreate) (*pgx.Batch, error) {
	claimed, claimedArgs := o.claimedSQL(c.ExternalID, id)
	b := &pgx.Batch{}
	claimQuery, claimArgs := o.claimOrderSQL(c.ExternalID, id, c.Client)
	b.Queue(database.Numbered(claimQuery), claimArgs...)
	if c.Client != nil {
		q, args, err := o.clientInsert(*c.Client, *clientID, claimed, claimedArgs...)
		if err != nil {
			return nil, err
		}
		b.Queue(database.Numbered(q+ClientReturning), args...)
	}
	n, g, err := o.newOrder(id, clientID, c.Order, c.totals, c.status)
	if err != nil {
		return nil, err
	}
	q, args := n.Statement(g, order.Condition{
		SQL:  claimed + ` AND (?::uuid IS NULL OR EXISTS (SELECT 1 FROM clients WHERE id = ?))`,
		Args: append(claimedArgs[:len(claimedArgs):len(claimedArgs)], database.NullableID(clientID), database.NullableID(clientID))})
	b.Queue(database.Numbered(q), args...)
	return b, nil
}

func scanOrder(row database.Row) (*order.Order, error) {
	v, err := order.Scan(row)
	return &v, err
}

// atMostOne reads the rows of the batch's next statement, which returns one row or none.
func atMostOne[T any](r pgx.BatchResults, scan func(database.Row) (*T, error)) (*T, error) {
	rows, err := r.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var v *T
	for rows.Next() {
		if v != nil {
			return nil, fmt.Errorf("more than one row")
		}
		if v, err = scan(rows); err != nil {
			return nil, err
		}
	}
	return v, rows.Err()
}

// An external id names an entity for one integration key: external_refs maps (key, entity type,
// external id) to the entity's id. This file writes that SQL, once: a claim inserts the mapping
// unless the external id is already known, and the table's primary key settles a race (a
// concurrent claim of the same id waits for the first transaction to end, then inserts nothing); a
// lookup reads the mapping. Statements that claim or look up as one of their steps embed these.

// Entity types of external_refs.
const (
	entityOrder   = "order"
	entityPayment = "payment"
	entityClient  = "client"
)

// ref is an external id of an entity type for a key. A nil key (an app write has none) is SQL NULL,
// which no row matches.
type ref struct {
	key        *uuid.UUID
	entity     string
	externalID string
}

// ref is the external id of the op's key.
func (o *op) ref(entity, externalID string) ref { return ref{o.keyID(), entity, externalID} }

// claimSQL claims a ref for an internal id if cond (SQL following the select list: a FROM, a WHERE,
// or nothing) yields a row, and returns the internal id if it made the mapping. Its arguments are
// claimArgs, then cond's.
func claimSQL(cond string) string {
	return `INSERT INTO external_refs (integration_key_id, entity_type, external_id, internal_id)
		SELECT ?, ?, ?, ? ` + cond + ` ON CONFLICT DO NOTHING RETURNING internal_id`
}

func (r ref) claimArgs(internalID uuid.UUID) []any {
	return []any{database.NullableID(r.key), r.entity, r.externalID, internalID}
}

// lookupSQL reads the internal id of a ref; its arguments are lookupArgs.
const lookupSQL = `SELECT internal_id FROM external_refs
	WHERE integration_key_id = ? AND entity_type = ? AND external_id = ?`

func (r ref) lookupArgs() []any { return []any{database.NullableID(r.key), r.entity, r.externalID} }

// claimRef records externalID -> candidate for the key unless the external id is already known, and
// returns the id it maps to and whether this call made the mapping; a loser of a race reads the
// winner's id.
func (o *op) claimRef(entity, externalID string, candidate uuid.UUID) (uuid.UUID, bool, error) {
	var won []uuid.UUID
	err := o.tx.Raw(claimSQL(""), o.ref(entity, externalID).claimArgs(candidate)...).Find(&won).Error
	if err != nil {
		return uuid.Nil, false, fmt.Errorf("claim %s external_id: %w", entity, err)
	}
	if len(won) == 1 {
		return candidate, true, nil
	}
	id, err := o.lookupRef(entity, externalID)
	if err != nil {
		return uuid.Nil, false, err
	}
	return id, false, nil
}

// lookupRef reads the internal id of a known external id, or ErrNotFound.
func (o *op) lookupRef(entity, externalID string) (uuid.UUID, error) {
	return lookupRef(o.ctx, o.tx, o.key, entity, externalID)
}

func lookupRef(ctx context.Context, db *gorm.DB, key *models.IntegrationKey, entity, externalID string) (uuid.UUID, error) {
	var ids []uuid.UUID
	err := db.WithContext(ctx).Raw(lookupSQL, ref{&key.ID, entity, externalID}.lookupArgs()...).Find(&ids).Error
	if err != nil {
		return uuid.Nil, fmt.Errorf("look up %s external_id: %w", entity, err)
	}
	if len(ids) == 0 {
		return uuid.Nil, problem.Fail(problem.NotFound, "no %s with external_id %q", entity, externalID)
	}
	return ids[0], nil
}
