#!/bin/sh
# The proxy container: TLS when a certificate and its key are mounted in
# /etc/nginx/tls, plain HTTP otherwise; the configuration is checked first.
set -eu
site=http
if [ -s /etc/nginx/tls/fullchain.pem ] && [ -s /etc/nginx/tls/privkey.pem ]; then
    site=https
fi
mkdir -p /etc/nginx/cardroom/enabled
ln -sf "/etc/nginx/cardroom/$site.conf" /etc/nginx/cardroom/enabled/site.conf
echo "cardroom proxy: serving $site"
nginx -t -q
exec nginx -g 'daemon off;'
