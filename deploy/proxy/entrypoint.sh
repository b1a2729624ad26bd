#!/bin/sh
# Write nginx's configuration from the template and the environment, then run
# nginx in the foreground as this (unprivileged) user:
#   PROXY_LISTEN (0.0.0.0), PROXY_PORT (8080): plain HTTP;
#   PROXY_TLS_PORT (8443): HTTPS, when /etc/nginx/tls holds fullchain.pem and
#     privkey.pem (then plain HTTP only redirects there);
#   WEB_PORT (8000): gunicorn on 127.0.0.1 (host networking).
set -eu
conf=/run/cardroom-proxy/nginx.conf
listen=${PROXY_LISTEN:-0.0.0.0}
tls_port=${PROXY_TLS_PORT:-8443}
if [ -s /etc/nginx/tls/fullchain.pem ] && [ -s /etc/nginx/tls/privkey.pem ]; then
  echo "cardroom proxy: serving https on $listen:$tls_port (http on ${PROXY_PORT:-8080} redirects)"
  plain="        location / { return 301 https://\$host:$tls_port\$request_uri; }"
  tls="    server {
        listen $listen:$tls_port ssl http2 default_server;
        ssl_certificate /etc/nginx/tls/fullchain.pem;
        ssl_certificate_key /etc/nginx/tls/privkey.pem;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_session_cache shared:cardroom_tls:10m;
        ssl_session_tickets off;
        set \$cardroom_var_dir /data/var;
        include /etc/nginx/cardroom/locations.conf;
    }"
else
  echo "cardroom proxy: serving http on $listen:${PROXY_PORT:-8080}"
  plain="        include /etc/nginx/cardroom/locations.conf;"
  tls=""
fi
awk -v plain="$plain" -v tls="$tls" '
  $0 == "@PLAIN_LOCATIONS@" { print plain; next }
  $0 == "@TLS_SERVER@" { print tls; next }
  { print }' /etc/nginx/cardroom.conf.template \
  | sed -e "s/@PROXY_LISTEN@/$listen/g" -e "s/@PROXY_PORT@/${PROXY_PORT:-8080}/g" -e "s/@WEB_PORT@/${WEB_PORT:-8000}/g" >"$conf"
nginx -t -q -c "$conf"
exec nginx -c "$conf" -g 'daemon off;'
