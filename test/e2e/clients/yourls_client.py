"""Drives the `yourls` PyPI client (YOURLSClient) for the e2e journey: one call per run.

argv[1] is JSON: {"apiurl", "auth": {"signature"} | {"username", "password"} | {"timed": {"username", "token", "hash", "offset"}},
"call": "shorten" | "expand" | "url_stats" | "stats" | "db_stats", "args": {...}}. Prints the result as JSON,
or {"error": <exception class>, "message", "status", ...} for what the client raised.
"""
import hashlib
import json
import sys
import time

import yourls


class TimedSignatureClient(yourls.YOURLSClient):
    """A time-limited signature as YOURLS documents it: signature = hash(timestamp + token), with the username."""

    def __init__(self, apiurl, username, token, hash_name, offset):
        super().__init__(apiurl)
        self._timed = (username, token, hash_name, offset)

    def _api_request(self, params):
        username, token, hash_name, offset = self._timed
        timestamp = str(int(time.time()) + offset)
        self._data.update(
            username=username,
            timestamp=timestamp,
            signature=hashlib.new(hash_name or 'md5', (timestamp + token).encode()).hexdigest(),
        )
        if hash_name:
            self._data['hash'] = hash_name
        return super()._api_request(params)


def shortened(u):
    return {
        'shorturl': u.shorturl, 'url': u.url, 'title': u.title, 'date': u.date.isoformat(),
        'ip': u.ip, 'clicks': u.clicks, 'keyword': u.keyword,
    }


def main():
    command = json.loads(sys.argv[1])
    auth = command['auth']
    if 'timed' in auth:
        t = auth['timed']
        client = TimedSignatureClient(command['apiurl'], t['username'], t['token'], t.get('hash'), t.get('offset', 0))
    else:
        client = yourls.YOURLSClient(command['apiurl'], **auth)
    call, args = command['call'], command.get('args', {})
    try:
        if call == 'shorten':
            out = shortened(client.shorten(**args))
        elif call == 'expand':
            out = {'longurl': client.expand(**args)}
        elif call == 'url_stats':
            out = shortened(client.url_stats(**args))
        elif call == 'stats':
            links, stats = client.stats(**args)
            out = {'links': [shortened(u) for u in links], 'total_clicks': stats.total_clicks, 'total_links': stats.total_links}
        elif call == 'db_stats':
            stats = client.db_stats()
            out = {'total_clicks': stats.total_clicks, 'total_links': stats.total_links}
        else:
            raise SystemExit('unknown call ' + call)
    except yourls.YOURLSURLExistsError as e:
        out = {'error': type(e).__name__, 'message': str(e), 'url': shortened(e.url)}
    except yourls.YOURLSKeywordExistsError as e:
        out = {'error': type(e).__name__, 'message': str(e), 'keyword': e.keyword}
    except (yourls.YOURLSAPIError, yourls.YOURLSHTTPError) as e:
        response = getattr(e, 'response', None)
        out = {'error': type(e).__name__, 'message': str(e), 'status': response.status_code if response is not None else None}
    except Exception as e:  # requests' HTTPError without a YOURLS body
        response = getattr(e, 'response', None)
        out = {'error': type(e).__name__, 'message': str(e), 'status': response.status_code if response is not None else None}
    print(json.dumps(out))


main()
