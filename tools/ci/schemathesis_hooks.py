"""Schemathesis hooks of tools/ci/api-fuzz.sh: an NDJSON serializer for the batch route's
application/x-ndjson body (its schema documents one line: a value of it, or a list of them, becomes
one JSON document per line)."""
import json

import schemathesis


@schemathesis.serializer("application/x-ndjson")
def ndjson(ctx, value):
    rows = value if isinstance(value, list) else [value]
    return "".join(json.dumps(row) + "\n" for row in rows).encode("utf-8")
