# Temporal's schema in PostgreSQL, as Temporal's own compose files do it: create the databases
# temporal and temporal_visibility (SQL visibility) and bring their schemas to the release whose
# schema files it is given. Idempotent: a database just created gets its version table, an existing
# one keeps its version, and update-schema migrates an older schema forward. docker-compose.yml's
# temporal-schema one-shot and the tests' cluster (internal/dev/temporalcluster) both run this file.
#
# temporal-sql-tool reads SQL_PLUGIN, SQL_HOST, SQL_PORT, SQL_USER and SQL_PASSWORD itself.
# TEMPORAL_SCHEMA_DIR: the release's schema/postgresql/v12 (admin-tools keeps it under /etc/temporal).
# TEMPORAL_DBNAME, TEMPORAL_VISIBILITY_DBNAME: the two databases, temporal and temporal_visibility.
schema=${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema/postgresql/v12}
for db in "${TEMPORAL_DBNAME:-temporal}:temporal" "${TEMPORAL_VISIBILITY_DBNAME:-temporal_visibility}:visibility"; do
  name=${db%%:*} dir=${db##*:}
  if temporal-sql-tool --db "$name" create-database; then
    temporal-sql-tool --db "$name" setup-schema -v 0.0
  fi
  temporal-sql-tool --db "$name" update-schema -d "$schema/$dir/versioned"
done
