#!/usr/bin/env python3
"""Checks the Grafana dashboards of deploy/grafana/dashboards:

- each file parses as JSON and has a uid, a title and panels with unique ids and a gridPos;
- every panel and target uses a datasource uid that deploy/grafana/provisioning provides;
- every target has a PromQL expr; the metrics the operators rely on are all shown;
- with --rules OUT, writes every expr into a Prometheus rule file (as recording rules, Grafana's
  $__rate_interval etc. replaced by 5m), so `promtool check rules OUT` checks the PromQL.

Prints every problem on stderr; exit 1 if there is one. Needs PyYAML.
"""
import glob
import json
import os
import re
import sys

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
GRAFANA = os.path.join(ROOT, 'deploy', 'grafana')
# what the overview must show (deploy/README.md, Prometheus and Grafana)
REQUIRED_METRICS = [
    'shortlink_redirect_requests_total', 'shortlink_redirect_duration_seconds_bucket',
    'shortlink_click_buffer_size', 'shortlink_click_events_dropped_total',
    'shortlink_analytics_consumer_lag', 'shortlink_redirect_breaker_state',
]
GRAFANA_VARS = re.compile(r'\$(__rate_interval|__interval|__range)|\$\{(__rate_interval|__interval|__range)\}')


def main(argv):
    rules_out = argv[argv.index('--rules') + 1] if '--rules' in argv else None
    problems, exprs = [], []
    uids = set()
    for p in glob.glob(os.path.join(GRAFANA, 'provisioning', 'datasources', '*.y*ml')):
        with open(p) as f:
            for ds in (yaml.safe_load(f) or {}).get('datasources', []):
                uids.add(ds.get('uid'))
    if not uids:
        problems.append('no provisioned datasource with a uid in deploy/grafana/provisioning/datasources')
    files = sorted(glob.glob(os.path.join(GRAFANA, 'dashboards', '*.json')))
    if not files:
        problems.append('no dashboard in deploy/grafana/dashboards')
    for path in files:
        name = os.path.relpath(path, ROOT)
        try:
            with open(path) as f:
                dash = json.load(f)
        except ValueError as e:
            problems.append(f'{name}: not valid JSON: {e}')
            continue
        for key in ('uid', 'title', 'panels'):
            if not dash.get(key):
                problems.append(f'{name}: no {key}')
        ids = [p.get('id') for p in dash.get('panels', [])]
        if len(ids) != len(set(ids)) or None in ids:
            problems.append(f'{name}: panel ids missing or not unique: {ids}')
        for panel in dash.get('panels', []):
            where = f'{name} panel {panel.get("id")} "{panel.get("title")}"'
            if not all(k in (panel.get('gridPos') or {}) for k in ('x', 'y', 'w', 'h')):
                problems.append(f'{where}: no complete gridPos')
            for obj in [panel] + panel.get('targets', []):
                ds = obj.get('datasource')
                if ds is not None and (not isinstance(ds, dict) or ds.get('uid') not in uids):
                    problems.append(f'{where}: datasource {ds} is not a provisioned one ({sorted(uids)})')
            if not panel.get('targets'):
                problems.append(f'{where}: no targets')
            for t in panel.get('targets', []):
                expr = (t.get('expr') or '').strip()
                if not expr:
                    problems.append(f'{where} target {t.get("refId")}: empty expr')
                    continue
                exprs.append((where, GRAFANA_VARS.sub('5m', expr)))
    shown = ' '.join(e for _, e in exprs)
    for m in REQUIRED_METRICS:
        if not re.search(r'\b' + m + r'\b', shown):
            problems.append(f'no dashboard panel shows {m}')
    if rules_out:
        rules = [{'record': f'dashboard:expr_{i}', 'expr': e} for i, (_, e) in enumerate(exprs)]
        with open(rules_out, 'w') as f:
            yaml.safe_dump({'groups': [{'name': 'grafana-dashboard-exprs', 'rules': rules}]}, f, sort_keys=False)
    for p in problems:
        print(f'  - {p}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
