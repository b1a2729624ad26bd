#!/bin/sh
# Start PostgreSQL on POSTGRES_LISTEN (127.0.0.1) port POSTGRES_PORT (5432),
# creating the cluster first when the data folder is empty: POSTGRES_USER is
# its superuser (password POSTGRES_PASSWORD, scram-sha-256 for every
# connection) and POSTGRES_DB its database. TLS is on when a certificate and
# key are mounted at /etc/cardroom/pg-tls/server.crt and server.key (what
# workers on other hosts connect with, sslmode=verify-full: docs/operations.md).
# Extra arguments go to postgres (e.g. -c shared_buffers=256MB).
set -eu
: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
USER_NAME=${POSTGRES_USER:-cardroom}
DB_NAME=${POSTGRES_DB:-cardroom}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
  initdb --pgdata="$PGDATA" --username="$USER_NAME" --pwfile="$pwfile" \
    --auth-local=scram-sha-256 --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "CREATE DATABASE \"$DB_NAME\" OWNER \"$USER_NAME\";" | postgres --single -D "$PGDATA" -j template1 >/dev/null
  echo "cardroom-postgres: created the cluster, user $USER_NAME and database $DB_NAME"
fi
set -- -c "listen_addresses=${POSTGRES_LISTEN:-127.0.0.1}" -p "${POSTGRES_PORT:-5432}" -c unix_socket_directories=/tmp "$@"
if [ -s /etc/cardroom/pg-tls/server.crt ] && [ -s /etc/cardroom/pg-tls/server.key ]; then
  set -- -c ssl=on -c ssl_cert_file=/etc/cardroom/pg-tls/server.crt -c ssl_key_file=/etc/cardroom/pg-tls/server.key "$@"
fi
exec postgres -D "$PGDATA" "$@"
