#!/bin/sh
# Write nginx's configuration from the template and the environment, then run
# nginx in the foreground as this (unprivileged) user:
#   PROXY_LISTEN (0.0.0.0) and PROXY_PORT (8080): where clients connect;
#   WEB_PORT (8000): gunicorn on 127.0.0.1 (host networking);
#   MAX_UPLOAD_BYTES (10485760): the largest request body, the upload limit.
set -eu
conf=/run/cardroom-proxy/nginx.conf
sed -e "s/@PROXY_LISTEN@/${PROXY_LISTEN:-0.0.0.0}/g" -e "s/@PROXY_PORT@/${PROXY_PORT:-8080}/g" \
    -e "s/@WEB_PORT@/${WEB_PORT:-8000}/g" -e "s/@MAX_UPLOAD_BYTES@/${MAX_UPLOAD_BYTES:-10485760}/g" \
    /etc/nginx/cardroom.conf.template >"$conf"
nginx -t -q -c "$conf"
exec nginx -c "$conf" -g 'daemon off;'
