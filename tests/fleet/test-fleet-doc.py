#!/usr/bin/env python3
"""The deployment snippets of docs/fleet.md, checked by the tools that read them.

Every fenced block after a `<!-- fleet-test: NAME -->` line is written to NAME in a
temporary directory, then: promtool check config (the scrape configuration, with its
rule file), promtool check rules and promtool test rules (the alerts fire when they
should and not before), systemd-analyze verify (the watcher's unit, and the server's
drop-in on a stand-in unit), and the pod spec's structure. A tool that is missing makes
its check skip with the reason; meson reads exit 77 as a skipped test.
Usage: test-fleet-doc.py DOC LAUNCHER
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
failures = []
skipped = []


def blocks(doc):
    text = open(doc, encoding='utf-8').read()
    out = {}
    for m in re.finditer(r'<!-- fleet-test: (\S+) -->\n```[a-z]*\n(.*?)```', text, re.S):
        out[m.group(1)] = m.group(2)
    return out


def run(argv, cwd, what, quiet=True):
    r = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=120)
    out = (r.stdout + r.stderr).strip()
    if r.returncode != 0:
        failures.append('%s: exit %d\n%s' % (what, r.returncode, out))
    elif quiet and r.stderr.strip():
        failures.append('%s: warnings\n%s' % (what, r.stderr.strip()))
    else:
        print('ok: %s' % what)
    return out


# The rules' unit tests: series made up to cross the budget and flip the verdict.
RULE_TESTS = '''rule_files:
  - inferscope-rules.yml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      - series: 'inferscope_gpu_busy_ratio{host="a",pid="1",gpu="0"}'
        values: '0.2x30'
      - series: 'inferscope_gpu_busy_ratio{host="a",pid="2",gpu="0"}'
        values: '0.9x30'
      - series: 'inferscope_verdict{host="a",pid="1",inferscope_verdict="gpu_bound"}'
        values: '1x10 0x20'
      - series: 'inferscope_verdict{host="a",pid="1",inferscope_verdict="cpu_bound"}'
        values: '0x10 1x20'
      - series: 'inferscope_verdict{host="a",pid="2",inferscope_verdict="gpu_bound"}'
        values: '1x30'
    alert_rule_test:
      - eval_time: 10m
        alertname: InferScopeGpuIdle
        exp_alerts: []
      - eval_time: 20m
        alertname: InferScopeGpuIdle
        exp_alerts:
          - exp_labels: {severity: warning, host: a, pid: "1", gpu: "0"}
            exp_annotations:
              summary: "GPU 0 of a (pid 1) is idle 80% of the time"
      - eval_time: 5m
        alertname: InferScopeVerdictChanged
        exp_alerts: []
      - eval_time: 15m
        alertname: InferScopeVerdictChanged
        exp_alerts:
          - exp_labels: {severity: info, host: a, pid: "1"}
            exp_annotations:
              summary: "the verdict of a (pid 1) changed in the last 30 minutes"
'''


def check_prometheus(b, tmp):
    promtool = shutil.which('promtool')
    if promtool is None:
        skipped.append('promtool is not installed (Debian package prometheus)')
        return
    run([promtool, 'check', 'rules', 'inferscope-rules.yml'], tmp, 'promtool check rules')
    run([promtool, 'check', 'config', 'prometheus.yml'], tmp, 'promtool check config')
    with open(os.path.join(tmp, 'rules-test.yml'), 'w') as f:
        f.write(RULE_TESTS)
    run([promtool, 'test', 'rules', 'rules-test.yml'], tmp, 'promtool test rules', quiet=False)


def check_systemd(b, tmp, launcher):
    sa = shutil.which('systemd-analyze')
    if sa is None:
        skipped.append('systemd-analyze is not installed')
        return
    # the unit names the installed launcher: verify needs an executable there
    unit = b['inferscope-watch.service'].replace('/usr/local/bin/inferscope', launcher)
    if unit == b['inferscope-watch.service']:
        failures.append('inferscope-watch.service: ExecStart is not /usr/local/bin/inferscope')
    with open(os.path.join(tmp, 'inferscope-watch.service'), 'w') as f:
        f.write(unit)
    run([sa, 'verify', './inferscope-watch.service'], tmp, 'systemd-analyze verify (watch)')
    # the drop-in on a stand-in for the user's server unit
    with open(os.path.join(tmp, 'serve.service'), 'w') as f:
        f.write('[Service]\nExecStart=/bin/true\n')
    run([sa, 'verify', './serve.service'], tmp, 'systemd-analyze verify (drop-in)')
    conf = b['serve.service.d/inferscope.conf']
    for want in ('LD_PRELOAD=', 'INFERSCOPE_MODE=continuous', 'INFERSCOPE_RETAIN='):
        if want not in conf:
            failures.append('the drop-in does not set %s' % want)


def check_pod(b):
    try:
        import yaml
    except ImportError:
        skipped.append('python3-yaml is not installed: the pod spec is not parsed')
        return
    pod = yaml.safe_load(b['pod.yaml'])
    spec = pod['spec']
    vols = {v['name'] for v in spec['volumes']}
    init = spec['initContainers'][0]
    lib_mount = {m['name']: m['mountPath'] for m in init['volumeMounts']}
    copied_to = init['command'][-1].rstrip('/')
    problems = []
    if 'libinferscope.so' not in init['command'][-2]:
        problems.append('the init container does not copy libinferscope.so')
    if lib_mount.get('inferscope-lib', '').rstrip('/') != copied_to:
        problems.append('the init container copies outside its shared volume')
    byname = {c['name']: c for c in spec['containers']}
    serve, watch = byname['serve'], byname['inferscope-watch']
    env = {e['name']: e['value'] for e in serve['env']}
    mounts = {m['name']: m['mountPath'] for m in serve['volumeMounts']}
    if env.get('LD_PRELOAD') != mounts['inferscope-lib'] + '/libinferscope.so':
        problems.append('LD_PRELOAD does not name the copied library')
    if env.get('INFERSCOPE_MODE') != 'continuous':
        problems.append('the server does not record continuously')
    seg_dir = os.path.dirname(env.get('INFERSCOPE_OUTPUT', ''))
    if seg_dir != mounts['inferscope-segments']:
        problems.append('the segments are not written to the shared volume')
    wmounts = {m['name']: m['mountPath'] for m in watch['volumeMounts']}
    if watch['command'][:2] != ['inferscope', 'watch'] or \
            watch['command'][-1] != wmounts['inferscope-segments']:
        problems.append('the sidecar does not watch the segments volume')
    host, port = watch['command'][watch['command'].index('--listen') + 1].rsplit(':', 1)
    if host in ('0.0.0.0', '[::]', '::', '*', ''):
        problems.append('the sidecar listens on every address (bind the pod IP)')
    if int(port) != watch['ports'][0]['containerPort']:
        problems.append('the sidecar listens on another port than it exposes')
    for c in [init, serve, watch]:
        for m in c['volumeMounts']:
            if m['name'] not in vols:
                problems.append('%s mounts an undeclared volume %s' % (c['name'], m['name']))
    if problems:
        failures.append('pod.yaml: ' + '; '.join(problems))
    else:
        print('ok: pod.yaml structure')


def main():
    doc, launcher = sys.argv[1], os.path.abspath(sys.argv[2])
    b = blocks(doc)
    need = ['serve.service.d/inferscope.conf', 'inferscope-watch.service', 'pod.yaml',
            'prometheus.yml', 'inferscope-rules.yml']
    missing = [n for n in need if n not in b]
    if missing:
        print('FAIL: docs/fleet.md has no block for %s' % ', '.join(missing))
        return 1
    tmp = tempfile.mkdtemp(prefix='isc-fleet-doc-')
    try:
        for name, text in b.items():
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as f:
                f.write(text)
        check_prometheus(b, tmp)
        check_systemd(b, tmp, launcher)
        check_pod(b)
    finally:
        shutil.rmtree(tmp)
    for f in failures:
        print('FAIL: ' + f)
    for s in skipped:
        print('skipped: ' + s)
    if failures:
        return 1
    return SKIP if skipped and len(skipped) == 3 else 0


if __name__ == '__main__':
    sys.exit(main())
