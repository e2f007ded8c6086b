#!/usr/bin/env python3
"""Compares the deployments of shortlink with deploy/topology.env, the one description of the
topology, and with the variable names the apps read.

    check_topology.py topology             the file itself: bash and this parser read the same values
    check_topology.py local                deploy/local/lib/env.sh exports every app variable
    check_topology.py compose [FILE]       docker-compose.yml (default) and its init files
    check_topology.py k8s RENDERED.yaml... kustomize output of deploy/k8s overlays
    check_topology.py prometheus           deploy/prometheus/prometheus.yml scrapes every admin port

Prints every difference on stderr and exits 1 when there is one. Needs PyYAML.
"""
import glob
import os
import re
import subprocess
import sys
from urllib.parse import urlsplit

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
TOPOLOGY = os.path.join(ROOT, 'deploy', 'topology.env')

# Names the deployment already gives the apps although no source file reads them yet (the apps
# are gaining them). Accepted while unread; once the code reads one, `check` says to drop it.
PENDING: set = set()  # every name the deployments set is read by the code now
# Where the names the apps read live (the config schema, the apps, the CLI tools).
SOURCE_GLOBS = ['libs/**/*.ts', 'apps/**/*.ts', 'tools/**/*.ts', 'tools/**/*.js']

problems = []
notes = []


def problem(msg):
    problems.append(msg)


# ------------------------------------------------------------------------------ topology file
def parse_topology(path=TOPOLOGY):
    values = {}
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith('#'):
                continue
            m = re.fullmatch(r'([A-Z_][A-Z0-9_]*)=("([^"$`\\]*)"|([^"\s$`\\#]*))(\s+#.*)?', line)
            if not m:
                raise SystemExit(f'{path}:{n}: not a plain NAME=value line (no $, `, \\ or spaces outside "..."): {line}')
            values[m.group(1)] = m.group(3) if m.group(3) is not None else m.group(4)
    return values


T = parse_topology()


def words(name):
    return T[name].split()


def entries(name):
    """'s0=a/db s1=b/db' -> [('s0', 'a', 'db'), ...]"""
    out = []
    for e in words(name):
        shard, _, loc = e.partition('=')
        inst, _, db = loc.partition('/')
        out.append((shard, inst, db))
    return out


def meta():
    inst, _, db = T['TOPO_MYSQL_META'].partition('/')
    return inst, db


def dbs_on(inst):
    out = []
    m_inst, m_db = meta()
    if m_inst == inst:
        out.append(m_db)
    for key in ('TOPO_MYSQL_SHARDS', 'TOPO_MYSQL_SPARE_SHARDS'):
        out += [db for _, i, db in entries(key) if i == inst]
    return out


def shard_spec(key, host_of):
    return ','.join(f'{s}={host_of(i)}/{db}' for s, i, db in entries(key))


def app_port(app, admin=False):
    return int(T[f'TOPO_{app.upper()}{"_ADMIN" if admin else ""}_PORT'])


def required_env(container):
    names = words('TOPO_APP_ENV')
    return names + (words('TOPO_CONTAINER_ENV') if container else [])


def check_topology_file():
    env = subprocess.run(['env', '-i', 'bash', '-c', f'set -a; . "{TOPOLOGY}"; env -0'],
                         capture_output=True, check=True).stdout.decode()
    from_bash = dict(kv.split('=', 1) for kv in env.split('\0') if kv.startswith('TOPO_'))
    if from_bash != T:
        diff = sorted(k for k in set(from_bash) | set(T) if from_bash.get(k) != T.get(k))
        problem(f'bash and the parser read {TOPOLOGY} differently: {diff}')
    for inst in words('TOPO_MYSQL_INSTANCES'):
        if f'TOPO_MYSQL_{inst.upper()}_PORT' not in T:
            problem(f'TOPO_MYSQL_{inst.upper()}_PORT missing for instance {inst}')
    insts = set(words('TOPO_MYSQL_INSTANCES'))
    seen = {}
    for key in ('TOPO_MYSQL_SHARDS', 'TOPO_MYSQL_SPARE_SHARDS'):
        for s, i, db in entries(key):
            if i not in insts:
                problem(f'{key}: {s} is on unknown instance {i!r}')
            if s in seen:
                problem(f'shard name {s} appears twice ({seen[s]} and {key})')
            seen[s] = key
    if meta()[0] not in insts:
        problem(f'TOPO_MYSQL_META is on unknown instance {meta()[0]!r}')
    for app in words('TOPO_APPS'):
        for admin in (False, True):
            key = f'TOPO_{app.upper()}{"_ADMIN" if admin else ""}_PORT'
            if key not in T:
                problem(f'{key} missing')


# ------------------------------------------------------------------------------ app variable names
_source = None


def source_text():
    global _source
    if _source is None:
        parts = []
        for g in SOURCE_GLOBS:
            for p in glob.glob(os.path.join(ROOT, g), recursive=True):
                if '/node_modules/' in p or p.endswith(('.spec.ts', '-spec.ts')):
                    continue
                with open(p, encoding='utf-8', errors='replace') as f:
                    parts.append(f.read())
        _source = '\n'.join(parts)
    return _source


def check_names(where, names, container):
    """Every required name is given; every given name is one the apps read (or PENDING)."""
    names = set(names)
    for req in required_env(container):
        if req not in names:
            problem(f'{where}: missing {req} (deploy/topology.env lists it in TOPO_APP_ENV/TOPO_CONTAINER_ENV)')
    text = source_text()
    for name in sorted(names):
        read = re.search(r'\b' + re.escape(name) + r'\b', text) is not None
        if name in PENDING:
            if read:
                notes.append(f'{name} is read by the code now: drop it from PENDING in deploy/ci/check_topology.py')
            continue
        if not read:
            problem(f'{where}: {name} is read by no app (not in libs/, apps/ or tools/): a typo, or a variable the code lost')


# ------------------------------------------------------------------------------ local stack
def check_local():
    path = os.path.join(ROOT, 'deploy', 'local', 'lib', 'env.sh')
    with open(path) as f:
        text = f.read()
    head = text.split('# --- local stack bookkeeping')[0]
    names = re.findall(r'^export ([A-Z_][A-Z0-9_]*)=', head, re.M)
    check_names('deploy/local stack.env', names, container=False)


# ------------------------------------------------------------------------------ compose
def env_of(service):
    env = service.get('environment') or {}
    if isinstance(env, list):
        env = dict(e.split('=', 1) if '=' in e else (e, None) for e in env)
    return {k: ('' if v is None else str(v)) for k, v in env.items()}


def expect(where, what, got, want):
    if got != want:
        problem(f'{where}: {what} is {got!r}, topology says {want!r}')


def sql_databases(folder):
    dbs = {}
    for p in sorted(glob.glob(os.path.join(folder, '*.sql'))):
        with open(p) as f:
            sql = f.read()
        for name, cs, coll in re.findall(
                r'CREATE DATABASE IF NOT EXISTS `([^`]+)`\s+CHARACTER SET (\w+)\s+COLLATE (\w+)', sql, re.I):
            dbs[name] = (cs, coll)
        users = re.findall(r"CREATE USER IF NOT EXISTS '([^']+)'@'%' IDENTIFIED BY '([^']*)'", sql, re.I)
        if (T['TOPO_MYSQL_USER'], T['TOPO_MYSQL_PASSWORD']) not in users:
            problem(f'{p}: does not create the user {T["TOPO_MYSQL_USER"]!r}@\'%\' with the topology password')
    return dbs


def check_compose(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    svcs = doc.get('services') or {}
    where = os.path.relpath(path, ROOT)
    apps = words('TOPO_APPS')
    for app in apps:
        if app not in svcs:
            problem(f'{where}: no service {app!r}')
    if not all(a in svcs for a in apps):
        return

    def mysql_host(inst):
        return f'mysql://{T["TOPO_MYSQL_USER"]}:{T["TOPO_MYSQL_PASSWORD"]}@mysql-{inst}:3306'

    # MySQL instances, their databases (init SQL) and host ports
    insts = words('TOPO_MYSQL_INSTANCES')
    extra = sorted(s for s in svcs if s.startswith('mysql-') and s[6:] not in insts)
    if extra:
        problem(f'{where}: MySQL services not in the topology: {extra}')
    for inst in insts:
        name = f'mysql-{inst}'
        svc = svcs.get(name)
        if svc is None:
            problem(f'{where}: no service {name!r} (TOPO_MYSQL_INSTANCES)')
            continue
        expect(where, f'{name} ports', [str(p) for p in svc.get('ports', [])], [f'{T[f"TOPO_MYSQL_{inst.upper()}_PORT"]}:3306'])
        cmd = ' '.join(svc.get('command') or [])
        for flag, key in (('--character-set-server', 'TOPO_MYSQL_CHARSET'), ('--collation-server', 'TOPO_MYSQL_COLLATION')):
            if f'{flag}={T[key]}' not in cmd:
                problem(f'{where}: {name} command lacks {flag}={T[key]}')
        init = [v for v in svc.get('volumes', []) if isinstance(v, str) and v.split(':')[1:2] == ['/docker-entrypoint-initdb.d']]
        if len(init) != 1:
            problem(f'{where}: {name} mounts no single folder on /docker-entrypoint-initdb.d')
            continue
        folder = os.path.join(ROOT, init[0].split(':')[0])
        dbs = sql_databases(folder)
        want = dbs_on(inst)
        if sorted(dbs) != sorted(want):
            problem(f'{where}: {name} init SQL ({os.path.relpath(folder, ROOT)}) creates {sorted(dbs)}, topology puts {sorted(want)} there')
        for db, (cs, coll) in dbs.items():
            if (cs, coll) != (T['TOPO_MYSQL_CHARSET'], T['TOPO_MYSQL_COLLATION']):
                problem(f'{where}: {name} creates {db} with {cs}/{coll}, topology says {T["TOPO_MYSQL_CHARSET"]}/{T["TOPO_MYSQL_COLLATION"]}')

    # Redis Cluster
    n = int(T['TOPO_REDIS_NODES'])
    want_nodes = [f'redis-{i}' for i in range(1, n + 1)]
    got_nodes = sorted((s for s in svcs if re.fullmatch(r'redis-\d+', s)), key=lambda s: int(s[6:]))
    expect(where, 'Redis node services', got_nodes, want_nodes)
    for s in got_nodes:
        cmd = svcs[s].get('command') or []
        if cmd[-2:] != ['--cluster-announce-hostname', s]:
            problem(f'{where}: {s} does not announce its hostname ({cmd})')
    init_env = env_of(svcs.get('redis-cluster-init', {}))
    expect(where, 'redis-cluster-init REDIS_NODES', init_env.get('REDIS_NODES'), ' '.join(f'{h}:6379' for h in want_nodes))
    expect(where, 'redis-cluster-init REDIS_REPLICAS', init_env.get('REDIS_REPLICAS'), T['TOPO_REDIS_REPLICAS'])
    with open(os.path.join(ROOT, 'deploy', 'docker', 'redis', 'redis.conf')) as f:
        mm = re.search(r'^maxmemory (\S+)', f.read(), re.M)
    expect('deploy/docker/redis/redis.conf', 'maxmemory', mm and mm.group(1), T['TOPO_REDIS_MAXMEMORY'])

    # Kafka
    k = svcs.get('kafka', {})
    kenv = env_of(k)
    expect(where, 'kafka KAFKA_NUM_PARTITIONS', kenv.get('KAFKA_NUM_PARTITIONS'), T['TOPO_KAFKA_CLICK_PARTITIONS'])
    kp = T['TOPO_KAFKA_PORT']
    expect(where, 'kafka ports', [str(p) for p in k.get('ports', [])], [f'{kp}:{kp}'])
    if f'localhost:{kp}' not in kenv.get('KAFKA_ADVERTISED_LISTENERS', ''):
        problem(f'{where}: kafka does not advertise localhost:{kp} for host tools')

    # ClickHouse
    ch = svcs.get('clickhouse', {})
    expect(where, 'clickhouse ports', [str(p) for p in ch.get('ports', [])],
           [f'{T["TOPO_CLICKHOUSE_HTTP_PORT"]}:8123', f'{T["TOPO_CLICKHOUSE_TCP_PORT"]}:9000'])

    # every file or folder the services mount from the repository exists
    for name, svc in svcs.items():
        for v in svc.get('volumes') or []:
            src = v.split(':')[0] if isinstance(v, str) else (v.get('source') if v.get('type') == 'bind' else None)
            if src and src.startswith('.') and not os.path.exists(os.path.join(os.path.dirname(os.path.abspath(path)), src)):
                problem(f'{where}: {name} mounts {src}, which does not exist')

    # the apps: same names as everywhere, values from the topology
    want = {
        'MYSQL_META_URL': f'{mysql_host(meta()[0])}/{meta()[1]}',
        'MYSQL_SHARDS': shard_spec('TOPO_MYSQL_SHARDS', mysql_host),
        'MYSQL_SPARE_SHARDS': shard_spec('TOPO_MYSQL_SPARE_SHARDS', mysql_host),
        'REDIS_CLUSTER_NODES': ','.join(f'{h}:6379' for h in want_nodes),
        'KAFKA_BROKERS': 'kafka:9092',
        'KAFKA_CLICK_TOPIC': T['TOPO_KAFKA_CLICK_TOPIC'],
        'KAFKA_CLICK_PARTITIONS': T['TOPO_KAFKA_CLICK_PARTITIONS'],
        'CLICKHOUSE_URL': 'http://clickhouse:8123',
        'CLICKHOUSE_USER': T['TOPO_CLICKHOUSE_USER'],
        'CLICKHOUSE_DATABASE': T['TOPO_CLICKHOUSE_DATABASE'],
        'DB_DRIVER': 'mysql', 'CACHE_DRIVER': 'redis', 'BUS_DRIVER': 'kafka', 'OLAP_DRIVER': 'clickhouse',
        'HOST': '0.0.0.0', 'ADMIN_HOST': '0.0.0.0',
    }
    for a in apps:
        want[f'{a.upper()}_PORT'] = str(app_port(a))
        want[f'{a.upper()}_ADMIN_PORT'] = str(app_port(a, admin=True))
    for app in apps:
        svc = svcs[app]
        env = env_of(svc)
        check_names(f'{where} {app}', env, container=True)
        for key, value in want.items():
            if key in env:
                expect(where, f'{app} {key}', env[key], value)
        for key in ('SHORTLINK_CODE_SECRET', 'SHORTLINK_VISITOR_SECRET'):
            if key in env and not re.fullmatch(r'\$\{' + key + r':\?[^}]+\}', env[key]):
                problem(f'{where}: {app} {key} must be ${{{key}:?...}} (a placeholder, never a value in the file)')
        build = svc.get('build') or {}
        expect(where, f'{app} build arg APP', (build.get('args') or {}).get('APP'), app)
        port, admin = app_port(app), app_port(app, admin=True)
        expect(where, f'{app} ports', [str(p) for p in svc.get('ports', [])], [f'{port}:{port}', f'127.0.0.1:{admin}:{admin}'])
        test = ' '.join(map(str, (svc.get('healthcheck') or {}).get('test', [])))
        if f':{port}/health' not in test:
            problem(f'{where}: {app} healthcheck does not probe :{port}/health')


# ------------------------------------------------------------------------------ prometheus
def check_prometheus():
    path = os.path.join(ROOT, 'deploy', 'prometheus', 'prometheus.yml')
    with open(path) as f:
        doc = yaml.safe_load(f)
    targets = set()
    for job in doc.get('scrape_configs', []):
        for sc in job.get('static_configs', []):
            targets.update(sc.get('targets', []))
    for app in words('TOPO_APPS'):
        t = f'{app}:{app_port(app, admin=True)}'
        if t not in targets:
            problem(f'deploy/prometheus/prometheus.yml: no scrape target {t} (the admin port of {app})')


# ------------------------------------------------------------------------------ kubernetes
def check_k8s(paths):
    """paths: rendered base first, then overlays. An overlay that renders no Secret (prod: it is
    created outside git) is checked with the keys of the base's Secret template."""
    base_secret = None
    for path in paths:
        with open(path) as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        where = os.path.basename(path)
        by_kind = {}
        for d in docs:
            by_kind.setdefault(d['kind'], []).append(d)
        cms = [c for c in by_kind.get('ConfigMap', []) if c['metadata']['name'].startswith('shortlink-config')]
        secrets = [s for s in by_kind.get('Secret', []) if s['metadata']['name'] == 'shortlink-secrets']
        if base_secret is None:
            if len(secrets) != 1:
                problem(f'{where} (the base): expected the shortlink-secrets Secret template, got {len(secrets)}')
                continue
            base_secret = secrets[0]
        if not secrets:
            secrets = [base_secret]
        if len(cms) != 1 or len(secrets) != 1:
            problem(f'{where}: expected one shortlink-config ConfigMap and one shortlink-secrets Secret, got {len(cms)} and {len(secrets)}')
            continue
        data = dict(cms[0].get('data') or {})
        secret_keys = set((secrets[0].get('stringData') or {}).keys()) | set((secrets[0].get('data') or {}).keys())
        # every workload takes both by reference
        for d in by_kind.get('Deployment', []) + by_kind.get('Job', []):
            c = d['spec']['template']['spec']['containers'][0]
            refs = [(k, v.get('name')) for e in c.get('envFrom', []) for k, v in e.items()]
            if refs != [('configMapRef', cms[0]['metadata']['name']), ('secretRef', 'shortlink-secrets')]:
                problem(f'{where}: {d["kind"]} {d["metadata"]["name"]} envFrom is {refs}, not the ConfigMap and the Secret')
        # a consumer beyond the partition count idles
        for h in by_kind.get('HorizontalPodAutoscaler', []):
            if h['spec']['scaleTargetRef']['name'].endswith('analytics') and h['spec']['maxReplicas'] > int(T['TOPO_KAFKA_CLICK_PARTITIONS']):
                problem(f'{where}: analytics HPA maxReplicas {h["spec"]["maxReplicas"]} > {T["TOPO_KAFKA_CLICK_PARTITIONS"]} partitions of {T["TOPO_KAFKA_CLICK_TOPIC"]}')
        overlap = secret_keys & set(data)
        if overlap:
            problem(f'{where}: set in both ConfigMap and Secret: {sorted(overlap)}')
        for s in ('SHORTLINK_CODE_SECRET', 'SHORTLINK_VISITOR_SECRET', 'MYSQL_SHARDS', 'MYSQL_META_URL', 'MYSQL_SPARE_SHARDS', 'CLICKHOUSE_PASSWORD'):
            if s in data:
                problem(f'{where}: {s} is in the ConfigMap; it belongs in the Secret')
        check_names(f'{where} ConfigMap+Secret', set(data) | secret_keys, container=True)
        want = {
            'DB_DRIVER': 'mysql', 'CACHE_DRIVER': 'redis', 'BUS_DRIVER': 'kafka', 'OLAP_DRIVER': 'clickhouse',
            'KAFKA_CLICK_TOPIC': T['TOPO_KAFKA_CLICK_TOPIC'], 'KAFKA_CLICK_PARTITIONS': T['TOPO_KAFKA_CLICK_PARTITIONS'],
            'CLICKHOUSE_DATABASE': T['TOPO_CLICKHOUSE_DATABASE'], 'HOST': '0.0.0.0', 'ADMIN_HOST': '0.0.0.0',
        }
        for a in words('TOPO_APPS'):
            want[f'{a.upper()}_PORT'] = str(app_port(a))
            want[f'{a.upper()}_ADMIN_PORT'] = str(app_port(a, admin=True))
        for key, value in want.items():
            expect(where, f'ConfigMap {key}', data.get(key), value)
        # shard names and databases (hosts and credentials are the operator's, in the Secret)
        sdata = secrets[0].get('stringData') or {}
        for env_key, topo_key in (('MYSQL_SHARDS', 'TOPO_MYSQL_SHARDS'), ('MYSQL_SPARE_SHARDS', 'TOPO_MYSQL_SPARE_SHARDS')):
            if env_key in sdata:
                got = [(p.split('=', 1)[0], urlsplit(p.split('=', 1)[1]).path.lstrip('/')) for p in sdata[env_key].split(',') if p]
                expect(where, f'Secret {env_key} shards/databases', got, [(s, db) for s, _, db in entries(topo_key)])
        if 'MYSQL_META_URL' in sdata:
            expect(where, 'Secret MYSQL_META_URL database', urlsplit(sdata['MYSQL_META_URL']).path.lstrip('/'), meta()[1])
        # workloads: ports and probes
        deps = {d['metadata']['name']: d for d in by_kind.get('Deployment', [])}
        svcs = {s['metadata']['name']: s for s in by_kind.get('Service', [])}
        for app in words('TOPO_APPS'):
            port, admin = app_port(app), app_port(app, admin=True)
            dep = next((d for n, d in deps.items() if n.endswith(app)), None)
            if dep is None:
                problem(f'{where}: no Deployment for {app}')
                continue
            c = dep['spec']['template']['spec']['containers'][0]
            ports = {p.get('name'): p['containerPort'] for p in c.get('ports', [])}
            expect(where, f'{app} container ports', ports, {'http': port, 'admin': admin})
            for probe in ('readinessProbe', 'livenessProbe'):
                get = (c.get(probe) or {}).get('httpGet') or {}
                if get.get('path') != '/health' or get.get('port') not in ('http', port):
                    problem(f'{where}: {app} {probe} is not GET /health on the public port ({get})')
            svc = next((s for n, s in svcs.items() if n.endswith(app)), None)
            if svc is None:
                problem(f'{where}: no Service for {app}')
                continue
            sports = {p.get('name'): p['port'] for p in svc['spec'].get('ports', [])}
            expect(where, f'{app} Service ports', sports, {'http': port, 'admin': admin})


def main(argv):
    if not argv:
        raise SystemExit(__doc__)
    what, args = argv[0], argv[1:]
    if what == 'topology':
        check_topology_file()
    elif what == 'local':
        check_local()
    elif what == 'compose':
        check_compose(args[0] if args else os.path.join(ROOT, 'docker-compose.yml'))
    elif what == 'prometheus':
        check_prometheus()
    elif what == 'k8s':
        if not args:
            raise SystemExit('k8s: give the rendered overlays')
        check_k8s(args)
    else:
        raise SystemExit(__doc__)
    for n in sorted(set(notes)):
        print(f'  note: {n}', file=sys.stderr)
    for p in problems:
        print(f'  - {p}', file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
