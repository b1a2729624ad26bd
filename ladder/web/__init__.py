"""cardroom's web pages (server-rendered; see ladder/templates/cardroom and
ladder/static/cardroom)."""
