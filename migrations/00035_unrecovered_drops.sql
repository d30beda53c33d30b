-- +goose Up
-- What is still broken at an endpoint (issue 51): its unrecovered drops, the chains that dropped and
-- have no later chain of the same event to it (no re-fire, resend or recovery since). A success does
-- not end them, as it ends the failure streak (consecutive_dropped): the receiver still misses those
-- events. The endpoint's row keeps how many there are and the oldest one's drop, as it keeps the
-- rest of its health, so reading them counts nothing. webhook_unrecovered_drops holds the drops
-- themselves: a drop's row is added as the chain drops and removed as a later chain of its event to
-- the endpoint is queued, or as the retention job deletes the dropped attempt. A recovery re-fires
-- exactly these (endpoints.recoverableSQL). Triggers keep them, so a previous release's binary,
-- which knows nothing of them, keeps them right too.
ALTER TABLE webhook_endpoints
    ADD COLUMN unrecovered_dropped bigint NOT NULL DEFAULT 0,
    ADD COLUMN oldest_unrecovered_at timestamptz;

CREATE TABLE webhook_unrecovered_drops (
    delivery_id uuid PRIMARY KEY,
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    event_id    uuid NOT NULL,
    dropped_at  timestamptz NOT NULL
);
-- An endpoint's in time order (its oldest, and a recovery's walk), and the ones a new chain of an event to an endpoint ends.
CREATE INDEX webhook_unrecovered_drops_endpoint ON webhook_unrecovered_drops (endpoint_id, dropped_at, delivery_id);
CREATE INDEX webhook_unrecovered_drops_event ON webhook_unrecovered_drops (event_id, endpoint_id);

-- wds_unrecovered_removed ends the drops of the given dropped attempts: it locks their endpoints'
-- rows first, in id order (every statement that changes these counts takes an endpoint's row before
-- the drops', so two never wait on each other in a cycle), deletes the drops, takes them off each
-- endpoint's count, then reads each one's oldest left in a statement of its own: its snapshot is
-- taken after the locks, so it sees every drop committed before, and a drop committed after adds
-- itself to the row it finds.
-- +goose StatementBegin
CREATE FUNCTION wds_unrecovered_removed(p_deliveries uuid[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    eps uuid[];
    ns bigint[];
BEGIN
    PERFORM 1 FROM webhook_endpoints w
    WHERE w.id IN (SELECT u.endpoint_id FROM webhook_unrecovered_drops u WHERE u.delivery_id = ANY (p_deliveries))
    ORDER BY w.id FOR NO KEY UPDATE;
    WITH removed AS (DELETE FROM webhook_unrecovered_drops u WHERE u.delivery_id = ANY (p_deliveries) RETURNING u.endpoint_id)
    SELECT array_agg(endpoint_id ORDER BY endpoint_id), array_agg(n ORDER BY endpoint_id) INTO eps, ns
    FROM (SELECT endpoint_id, count(*) AS n FROM removed GROUP BY endpoint_id) r;
    IF eps IS NULL THEN
        RETURN;
    END IF;
    UPDATE webhook_endpoints w SET unrecovered_dropped = w.unrecovered_dropped - x.n
    FROM unnest(eps, ns) x(id, n) WHERE w.id = x.id;
    UPDATE webhook_endpoints w SET oldest_unrecovered_at =
        (SELECT min(u.dropped_at) FROM webhook_unrecovered_drops u WHERE u.endpoint_id = w.id)
    WHERE w.id = ANY (eps);
END;
$$;
-- +goose StatementEnd

-- wds_unrecovered_added counts the drops a statement added into their endpoints' rows.
-- +goose StatementBegin
CREATE FUNCTION wds_unrecovered_added(p_endpoints uuid[], p_counts bigint[], p_oldest timestamptz[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE webhook_endpoints w SET unrecovered_dropped = w.unrecovered_dropped + x.n,
        oldest_unrecovered_at = least(w.oldest_unrecovered_at, x.oldest)
    FROM unnest(p_endpoints, p_counts, p_oldest) x(id, n, oldest) WHERE w.id = x.id;
END;
$$;
-- +goose StatementEnd

-- A drop of a real event (test events are not the support desk's) written as such (an attempt's
-- row) or turned so (a disable dropping the waiting chains).
-- +goose StatementBegin
CREATE FUNCTION wds_unrecovered_dropped() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
    eps uuid[];
    ns bigint[];
    oldest timestamptz[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        ids := ARRAY(SELECT c.id FROM changed c WHERE c.status = 'dropped' AND c.event_type <> 'webhook.test');
    ELSE
        ids := ARRAY(SELECT c.id FROM changed c JOIN was w ON w.id = c.id
            WHERE c.status = 'dropped' AND w.status <> 'dropped' AND c.event_type <> 'webhook.test');
    END IF;
    IF cardinality(ids) = 0 THEN
        RETURN NULL;
    END IF;
    WITH added AS (
        INSERT INTO webhook_unrecovered_drops (delivery_id, endpoint_id, event_id, dropped_at)
        SELECT d.id, d.endpoint_id, d.event_id, d.attempted_at FROM webhook_deliveries d WHERE d.id = ANY (ids)
        ON CONFLICT DO NOTHING RETURNING endpoint_id, dropped_at)
    SELECT array_agg(endpoint_id ORDER BY endpoint_id), array_agg(n ORDER BY endpoint_id), array_agg(o ORDER BY endpoint_id)
        INTO eps, ns, oldest
    FROM (SELECT endpoint_id, count(*) AS n, min(dropped_at) AS o FROM added GROUP BY endpoint_id) a;
    IF eps IS NOT NULL THEN
        PERFORM wds_unrecovered_added(eps, ns, oldest);
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- A later chain of the event to the endpoint (a re-fire, resend or recovered chain, queued) ends
-- every drop of that event there; so does the retention job deleting the dropped attempt.
-- +goose StatementBegin
CREATE FUNCTION wds_unrecovered_ended() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ended uuid[];
BEGIN
    IF TG_TABLE_NAME = 'webhook_dispatches' THEN
        ended := ARRAY(SELECT u.delivery_id FROM webhook_unrecovered_drops u
            JOIN (SELECT DISTINCT event_id, endpoint_id FROM changed WHERE kind <> 'test') c
                ON u.event_id = c.event_id AND u.endpoint_id = c.endpoint_id);
    ELSE
        ended := ARRAY(SELECT c.id FROM changed c WHERE c.status = 'dropped');
    END IF;
    IF cardinality(ended) > 0 THEN
        PERFORM wds_unrecovered_removed(ended);
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- Named to fire before the outcome triggers (triggers fire in name order): each statement locks the
-- endpoint's row before the events' rows, as a disable does.
CREATE TRIGGER webhook_deliveries_keep_unrecovered_insert AFTER INSERT ON webhook_deliveries
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wds_unrecovered_dropped();
CREATE TRIGGER webhook_deliveries_keep_unrecovered_update AFTER UPDATE ON webhook_deliveries
    REFERENCING OLD TABLE AS was NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wds_unrecovered_dropped();
CREATE TRIGGER webhook_deliveries_keep_unrecovered_delete AFTER DELETE ON webhook_deliveries
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wds_unrecovered_ended();
CREATE TRIGGER webhook_dispatches_clear_unrecovered AFTER INSERT ON webhook_dispatches
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wds_unrecovered_ended();

-- The drops the log holds that no later chain of their event to their endpoint followed: none
-- queued after the drop, and none attempted after it (its queued start may be pruned already).
INSERT INTO webhook_unrecovered_drops (delivery_id, endpoint_id, event_id, dropped_at)
SELECT d.id, d.endpoint_id, d.event_id, d.attempted_at FROM webhook_deliveries d
WHERE d.status = 'dropped' AND d.event_type <> 'webhook.test'
    AND NOT EXISTS (SELECT 1 FROM webhook_dispatches p WHERE p.event_id = d.event_id AND p.endpoint_id = d.endpoint_id
        AND p.kind <> 'test' AND p.created_at >= d.attempted_at)
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x WHERE x.event_id = d.event_id AND x.endpoint_id = d.endpoint_id
        AND x.chain_id <> d.chain_id AND x.attempted_at > d.attempted_at);
UPDATE webhook_endpoints w SET unrecovered_dropped = u.n, oldest_unrecovered_at = u.oldest
FROM (SELECT endpoint_id, count(*) AS n, min(dropped_at) AS oldest FROM webhook_unrecovered_drops GROUP BY endpoint_id) u
WHERE w.id = u.endpoint_id;

-- +goose Down
DROP TRIGGER webhook_dispatches_clear_unrecovered ON webhook_dispatches;
DROP TRIGGER webhook_deliveries_keep_unrecovered_delete ON webhook_deliveries;
DROP TRIGGER webhook_deliveries_keep_unrecovered_update ON webhook_deliveries;
DROP TRIGGER webhook_deliveries_keep_unrecovered_insert ON webhook_deliveries;
DROP FUNCTION wds_unrecovered_ended();
DROP FUNCTION wds_unrecovered_dropped();
DROP FUNCTION wds_unrecovered_added(uuid[], bigint[], timestamptz[]);
DROP FUNCTION wds_unrecovered_removed(uuid[]);
DROP TABLE webhook_unrecovered_drops;
ALTER TABLE webhook_endpoints DROP COLUMN oldest_unrecovered_at, DROP COLUMN unrecovered_dropped;
