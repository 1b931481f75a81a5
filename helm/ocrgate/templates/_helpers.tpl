{{/* Chart name, at most 63 characters. */}}
{{- define "ocrgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Fully qualified app name: the release name, plus the chart name unless the release name holds it. */}}
{{- define "ocrgate.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "ocrgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ocrgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ocrgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ocrgate.labels" -}}
helm.sh/chart: {{ include "ocrgate.chart" . }}
{{ include "ocrgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: ocr
{{- end }}

{{/* The ocrgate image: tag defaults to <variant>-<appVersion>, what scripts/build_docker_image.sh builds. */}}
{{- define "ocrgate.image" -}}
{{- $tag := .Values.image.tag | default (printf "%s-%s" .Values.variant .Chart.AppVersion) }}
{{- printf "%s:%s" .Values.image.repository $tag }}
{{- end }}

{{- define "ocrgate.tritonImage" -}}
{{- printf "%s:%s" .Values.triton.image.repository .Values.triton.image.tag }}
{{- end }}

{{- define "ocrgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ocrgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The validated mode: sidecar, external or embedded. */}}
{{- define "ocrgate.mode" -}}
{{- $mode := .Values.triton.mode }}
{{- if not (has $mode (list "sidecar" "external" "embedded")) }}
{{- fail (printf "triton.mode must be sidecar, external or embedded, got %q" $mode) }}
{{- end }}
{{- if not (has .Values.variant (list "cpu" "gpu")) }}
{{- fail (printf "variant must be cpu or gpu, got %q" .Values.variant) }}
{{- end }}
{{- $mode }}
{{- end }}

{{/* "true" when Triton runs as a native sidecar (init container with restartPolicy: Always). */}}
{{- define "ocrgate.nativeSidecar" -}}
{{- $v := toString .Values.triton.nativeSidecar }}
{{- if eq $v "auto" }}
{{- semverCompare ">=1.29.0-0" .Capabilities.KubeVersion.Version | toString }}
{{- else if has $v (list "true" "false") }}
{{- $v }}
{{- else }}
{{- fail (printf "triton.nativeSidecar must be auto, true or false, got %q" $v) }}
{{- end }}
{{- end }}

{{/* Name of the Secret holding CHAT_BOT_APIKEY; empty when there is none. */}}
{{- define "ocrgate.chatSecretName" -}}
{{- if .Values.chat.existingSecret }}
{{- .Values.chat.existingSecret }}
{{- else if .Values.chat.apiKey }}
{{- printf "%s-chat" (include "ocrgate.fullname" .) }}
{{- end }}
{{- end }}

{{/* The Triton container; dict with root (the top context) and native (bool). */}}
{{- define "ocrgate.tritonContainer" -}}
{{- $ := .root }}
{{- $t := $.Values.triton }}
{{- $resources := deepCopy $t.resources }}
{{- if eq $.Values.variant "gpu" }}
{{- $limits := get $resources "limits" | default dict }}
{{- $_ := set $limits "nvidia.com/gpu" $t.gpus }}
{{- $_ := set $resources "limits" $limits }}
{{- end -}}
- name: triton
  image: {{ include "ocrgate.tritonImage" $ | quote }}
  imagePullPolicy: {{ $t.image.pullPolicy }}
  {{- if .native }}
  # Native sidecar: started (startup probe passed) before ocrgate, stopped after it.
  restartPolicy: Always
  {{- end }}
  args:
    - tritonserver
    - --model-repository=/models
    - --exit-on-error=true
    - --strict-readiness=true
    - --allow-client-shm=true
    - --http-port={{ $t.ports.http }}
    - --grpc-port={{ $t.ports.grpc }}
    - --metrics-port={{ $t.ports.metrics }}
    {{- range $t.extraArgs }}
    - {{ . | quote }}
    {{- end }}
  env:
    # The pod's user has no home in the Triton image; caches (e.g. CUDA's) go to the writable /tmp.
    - name: HOME
      value: /tmp
    {{- with $t.extraEnv }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  ports:
    - name: triton-http
      containerPort: {{ $t.ports.http }}
      protocol: TCP
    - name: triton-grpc
      containerPort: {{ $t.ports.grpc }}
      protocol: TCP
    - name: triton-metrics
      containerPort: {{ $t.ports.metrics }}
      protocol: TCP
  startupProbe:
    httpGet:
      path: /v2/health/ready
      port: triton-http
    {{- toYaml $t.startupProbe | nindent 4 }}
  livenessProbe:
    httpGet:
      path: /v2/health/live
      port: triton-http
    {{- toYaml $t.livenessProbe | nindent 4 }}
  readinessProbe:
    httpGet:
      path: /v2/health/ready
      port: triton-http
    {{- toYaml $t.readinessProbe | nindent 4 }}
  {{- if and (not .native) (gt (int $t.preStopSleepSeconds) 0) }}
  lifecycle:
    preStop:
      exec:
        command: ["sleep", "{{ $t.preStopSleepSeconds }}"]
  {{- end }}
  resources:
    {{- toYaml $resources | nindent 4 }}
  securityContext:
    {{- toYaml $t.securityContext | nindent 4 }}
  volumeMounts:
    - name: model-repository
      mountPath: /models
      readOnly: true
    - name: dshm
      mountPath: /dev/shm
    - name: triton-tmp
      mountPath: /tmp
{{- end }}

{{/* ---- jobs and the NATS JetStream StatefulSet (nats.enabled) ---------------------------------- */}}

{{/* The chart-run NATS: its StatefulSet and client Service are named so. */}}
{{- define "ocrgate.nats.fullname" -}}
{{- printf "%s-nats" (include "ocrgate.fullname" .) | trunc 56 | trimSuffix "-" }}
{{- end }}

{{/* Its headless Service, which gives every NATS pod a stable DNS name for the cluster routes. */}}
{{- define "ocrgate.nats.headless" -}}
{{- printf "%s-headless" (include "ocrgate.nats.fullname" .) }}
{{- end }}

{{/* NATS pods carry another app.kubernetes.io/name than ocrgate's, so that ocrgate's Service and
PodDisruptionBudget never select them. */}}
{{- define "ocrgate.nats.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ocrgate.name" . }}-nats
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "ocrgate.nats.labels" -}}
helm.sh/chart: {{ include "ocrgate.chart" . }}
{{ include "ocrgate.nats.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.nats.image.tag | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: jobs-store
app.kubernetes.io/part-of: {{ include "ocrgate.name" . }}
{{- end }}

{{- define "ocrgate.nats.image" -}}
{{- printf "%s:%s" .Values.nats.image.repository .Values.nats.image.tag }}
{{- end }}

{{/* Where ocrgate finds NATS: nats.url, or the chart-run NATS's client Service; empty when jobs are
off. Checks the combination of jobs.enabled, nats.enabled and nats.url. */}}
{{- define "ocrgate.natsURL" -}}
{{- if and .Values.nats.enabled .Values.nats.url }}
{{- fail "nats.enabled (a NATS run by this chart) and nats.url (your own NATS) exclude each other: set one" }}
{{- end }}
{{- if .Values.jobs.enabled }}
{{- if .Values.nats.url }}
{{- .Values.nats.url }}
{{- else if .Values.nats.enabled }}
{{- printf "nats://%s:%v" (include "ocrgate.nats.fullname" .) .Values.nats.ports.client }}
{{- else }}
{{- fail "jobs.enabled needs a NATS that every replica shares: nats.enabled=true (the chart runs one) or nats.url (your own); an embedded store per pod would lose its jobs with the pod and hide them from the other replicas" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Replicas of ocrgate's job streams and buckets (OCRGATE_JOB_REPLICAS): jobs.streamReplicas, or
0 for the chart-run NATS's size (1 on an external NATS). */}}
{{- define "ocrgate.jobReplicas" -}}
{{- $r := int .Values.jobs.streamReplicas }}
{{- if eq $r 0 }}
{{- $r = .Values.nats.enabled | ternary (int .Values.nats.replicas) 1 }}
{{- end }}
{{- if and .Values.nats.enabled (gt $r (int .Values.nats.replicas)) }}
{{- fail (printf "jobs.streamReplicas %d is more than the %d NATS servers the chart runs (nats.replicas)" $r (int .Values.nats.replicas)) }}
{{- end }}
{{- $r }}
{{- end }}
