# deploy/local/lib/kafka.sh: one KRaft Kafka node (broker + controller) run from the jars Maven
# fetches into the cache (no distribution tarball), state in .run/kafka/.
# shellcheck shell=bash

kafka_proc_pattern() { echo "java*kafka.Kafka $RUN_DIR/kafka/server.properties*"; }

kafka_jars_dir() { echo "$CACHE_DIR/kafka-$KAFKA_VERSION/jars"; }

ensure_kafka_jars() {
  local dir; dir="$(kafka_jars_dir)"
  [[ -f $dir/.complete ]] && return 0
  local t; t=$(date +%s%3N)
  log "downloading Kafka $KAFKA_VERSION jars from Maven Central into $dir"
  rm -rf "$dir.tmp"; mkdir -p "$dir.tmp"
  local mlog="$CACHE_DIR/kafka-$KAFKA_VERSION/mvn.log"
  mvn -B -Dstyle.color=never -f "$STACK_DIR/kafka/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$dir.tmp" >"$mlog" 2>&1 \
    || { show_log "$mlog"; die "mvn could not fetch Kafka $KAFKA_VERSION (log: $mlog)"; }
  ls "$dir.tmp"/kafka_2.13-*.jar >/dev/null 2>&1 || die "kafka_2.13 jar missing after mvn"
  touch "$dir.tmp/.complete"
  rm -rf "$dir"; mv "$dir.tmp" "$dir"
  log "Kafka jars ready ($(find "$dir" -name '*.jar' | wc -l) jars, $(du -sh "$dir" | cut -f1)) in $(ms_since "$t") ms"
}


# Class-data sharing (AppCDS) for the two Kafka JVMs: the first run of each dumps the
# classes it loaded (-XX:ArchiveClassesAtExit) into .run/kafka/*.jsa.dump; once that JVM has
# exited normally the dump is moved to the cache and later runs map it (-XX:SharedArchiveFile),
# which cuts about 1 s off the broker start and 0.5 s off the format. KAFKA_CDS=0 turns it off.
# A mismatching archive (other JDK, other jars) is ignored by the JVM with a warning.
kafka_cds_archive() { # kind java
  local tag; tag="$("$2" -version 2>&1 | md5sum | cut -c1-8)"
  echo "$CACHE_DIR/kafka-$KAFKA_VERSION/cds-$1-$tag.jsa"
}
kafka_cds_args() { # kind java -> sets CDS_ARGS
  CDS_ARGS=()
  [[ ${KAFKA_CDS:-1} == 1 ]] || return 0
  local jsa; jsa="$(kafka_cds_archive "$1" "$2")"
  if [[ -s $jsa ]]; then CDS_ARGS=(-XX:SharedArchiveFile="$jsa")
  else
    rm -f "$RUN_DIR/kafka/$1.jsa.dump"
    CDS_ARGS=(-XX:ArchiveClassesAtExit="$RUN_DIR/kafka/$1.jsa.dump")
  fi
}
kafka_cds_promote() { # kind java: keep a finished dump
  local dump="$RUN_DIR/kafka/$1.jsa.dump" jsa
  [[ -s $dump ]] || return 0
  jsa="$(kafka_cds_archive "$1" "$2")"
  [[ -s $jsa ]] || { mv -f "$dump" "$jsa.tmp.$$" && mv -f "$jsa.tmp.$$" "$jsa"; } 2>/dev/null || true
  rm -f "$dump"
}
# after the broker was stopped: keep its class dump unless it had to be SIGKILLed
kafka_after_stop() {
  [[ -f $RUN_DIR/kafka/broker.jsa.dump ]] || return 0
  if [[ " ${STOP_KILLED[*]-} " == *" kafka "* ]]; then rm -f "$RUN_DIR/kafka/broker.jsa.dump"; return 0; fi
  local java; java="$(find_java)" || return 0
  kafka_cds_promote broker "$java"
}

kafka_launch() {
  local dir="$RUN_DIR/kafka" jars java
  jars="$(kafka_jars_dir)"; java="$(kafka_java)"
  mkdir -p "$dir"
  cat >"$dir/server.properties" <<EOF
# written by stack.sh: one node, KRaft combined mode
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KAFKA_CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=$TOPO_KAFKA_CLICK_PARTITIONS
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=6
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
# a broker restarted after SIGKILL can register again only once its old session expired
# (default 9 s): keep that short for failure tests
broker.session.timeout.ms=3000
broker.heartbeat.interval.ms=1000
log.retention.hours=24
log.segment.bytes=67108864
EOF
  local common=(-Djava.awt.headless=true -Dlog4j2.configurationFile="$STACK_DIR/kafka/log4j2.properties" -cp "$jars/*")
  if [[ ! -f $dir/data/meta.properties ]]; then
    rm -rf "$dir/data"
    # A URL-safe base64 id can start with '-', which the tool's argument parser takes for an
    # option ("--cluster-id: expected one argument"): draw again until it does not.
    local cid="-"
    while [[ $cid == -* ]]; do cid="$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"; done
    kafka_cds_args format "$java"
    "$java" -Xmx256m -XX:TieredStopAtLevel=1 -Dkafka.root.level=WARN ${CDS_ARGS[@]+"${CDS_ARGS[@]}"} "${common[@]}" \
      kafka.tools.StorageTool format -t "$cid" -c "$dir/server.properties" >"$dir/format.log" 2>&1 \
      || { show_log "$dir/format.log"; die "kafka storage format failed"; }
    kafka_cds_promote format "$java"
  fi
  kafka_cds_promote broker "$java"   # a dump left by an earlier broker run that exited
  kafka_cds_args broker "$java"
  [[ -f $dir/kafka.log ]] && mv -f "$dir/kafka.log" "$dir/kafka.log.1"
  # shellcheck disable=SC2086
  spawn kafka "$dir/kafka.log" "$java" $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:+ExitOnOutOfMemoryError -Dkafka.logs.dir="$dir" ${CDS_ARGS[@]+"${CDS_ARGS[@]}"} "${common[@]}" \
    kafka.Kafka "$dir/server.properties"
}

# An ApiVersions (v0) request over plain bash TCP: the broker's request path answers.
kafka_probe() {
  local out
  out="$(timeout 3 bash -c '
    exec 3<>/dev/tcp/127.0.0.1/'"$KAFKA_PORT"' || exit 1
    printf "\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x07\x00\x05stack" >&3
    head -c 10 <&3 | od -An -tx1' 2>/dev/null)" || return 1
  out="${out//[[:space:]]/}"
  [[ ${out:8:8} == 00000007 && ( ${out:16:4} == 0000 || ${out:16:4} == 0023 ) ]]
}
kafka_started() { grep -q 'Kafka Server started' "$RUN_DIR/kafka/kafka.log"; }
kafka_healthy() { kafka_probe && kafka_started; }

kafka_ready() {
  wait_for kafka "Kafka on 127.0.0.1:$KAFKA_PORT (ApiVersions + 'Kafka Server started')" 90 "$RUN_DIR/kafka/kafka.log" kafka_healthy
}

kafka_preflight() {
  require_free_port "$KAFKA_PORT" kafka KAFKA_PORT
  require_free_port "$KAFKA_CONTROLLER_PORT" "kafka controller" KAFKA_CONTROLLER_PORT
}

kafka_status() {
  local pid; pid="$(pid_or_empty kafka)"
  if [[ -z $pid ]]; then status_line kafka "" "$KAFKA_PORT" DOWN 0
  elif kafka_probe; then status_line kafka "$pid" "$KAFKA_PORT" "up (ApiVersions ok, controller $KAFKA_CONTROLLER_PORT)" 1
  else status_line kafka "$pid" "$KAFKA_PORT" "running, no ApiVersions answer" 0; fi
}

# Run a Kafka CLI class from the cached jars against this broker, e.g.
#   stack.sh kafka-tool org.apache.kafka.tools.TopicCommand --bootstrap-server 127.0.0.1:19092 --list
kafka_tool() {
  [[ $# -ge 1 ]] || die "usage: stack.sh kafka-tool <main class> [args...]"
  ensure_kafka_jars
  local java; java="$(kafka_java)"
  exec "$java" -Xmx256m -XX:TieredStopAtLevel=1 -Dkafka.root.level=WARN \
    -Dlog4j2.configurationFile="$STACK_DIR/kafka/log4j2.properties" -cp "$(kafka_jars_dir)/*" "$@"
}
