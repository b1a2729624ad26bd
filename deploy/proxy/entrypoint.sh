#!/bin/sh
# Write nginx's configuration from the template and the environment, then run
# nginx in the foreground as this (unprivileged) user:
#   PROXY_LISTEN (0.0.0.0), PROXY_PORT (8080): plain HTTP;
#   PROXY_TLS_PORT (8443): HTTPS, when /etc/nginx/tls holds fullchain.pem and
#     privkey.pem (then plain HTTP only redirects there);
#   WEB_PORT (8000): gunicorn on 127.0.0.1 (host networking).
# CARDROOM_PROXY_CHECK=1 only writes the configuration and checks it
# (nginx -t); tests/ops/test_proxy.py runs it so, with the paths below moved.
set -eu
template=${CARDROOM_PROXY_TEMPLATE:-/etc/nginx/cardroom.conf.template}
conf=${CARDROOM_PROXY_CONF:-/run/cardroom-proxy/nginx.conf}
tls_dir=${CARDROOM_PROXY_TLS_DIR:-/etc/nginx/tls}
settings=${CARDROOM_PROXY_SETTINGS:-/etc/nginx/cardroom}
listen=${PROXY_LISTEN:-0.0.0.0}
tls_port=${PROXY_TLS_PORT:-8443}
if [ -s "$tls_dir/fullchain.pem" ] && [ -s "$tls_dir/privkey.pem" ]; then
  echo "cardroom proxy: serving https on $listen:$tls_port (http on ${PROXY_PORT:-8080} redirects)"
  plain="        location / { return 301 https://\$host:$tls_port\$request_uri; }"
  tls="    server {
        listen $listen:$tls_port ssl http2 default_server;
        ssl_certificate $tls_dir/fullchain.pem;
        ssl_certificate_key $tls_dir/privkey.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:cardroom_tls:10m;
        ssl_session_tickets off;
        set \$cardroom_var_dir /data/var;
        include $settings/locations.conf;
    }"
else
  echo "cardroom proxy: serving http on $listen:${PROXY_PORT:-8080}"
  plain="        include $settings/locations.conf;"
  tls=""
fi
awk -v plain="$plain" -v tls="$tls" '
  $0 == "@PLAIN_LOCATIONS@" { print plain; next }
  $0 == "@TLS_SERVER@" { print tls; next }
  { print }' "$template" \
  | sed -e "s/@PROXY_LISTEN@/$listen/g" -e "s/@PROXY_PORT@/${PROXY_PORT:-8080}/g" -e "s/@WEB_PORT@/${WEB_PORT:-8000}/g" >"$conf"
nginx -t -q -c "$conf"
if [ "${CARDROOM_PROXY_CHECK:-0}" = 1 ]; then
  exit 0
fi
exec nginx -c "$conf" -g 'daemon off;'
