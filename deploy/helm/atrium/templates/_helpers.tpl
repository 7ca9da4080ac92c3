{{/* Names and labels. */}}
{{- define "atrium.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "atrium.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "atrium.selectorLabels" -}}
app.kubernetes.io/name: {{ include "atrium.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "atrium.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "atrium.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "atrium.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "atrium.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "atrium.secretName" -}}
{{- if .Values.secrets.create -}}
{{- printf "%s-secrets" (include "atrium.fullname" .) -}}
{{- else -}}
{{- required "secrets.existingSecret is required unless secrets.create is true" .Values.secrets.existingSecret -}}
{{- end -}}
{{- end -}}

{{/* A fleet without Redis would spend the whole vendor quota once per replica. */}}
{{- define "atrium.checkFleet" -}}
{{- if and (eq .Values.redis.mode "none") (or .Values.autoscaling.enabled (gt (int .Values.replicaCount) 1)) -}}
{{- fail "more than one replica needs redis.mode (standalone, sentinel or cluster): the vendor budget, cooldowns and cache are shared through Redis" -}}
{{- end -}}
{{- if and .Values.networkPolicy.enabled (not .Values.networkPolicy.vendors.cidrs) -}}
{{- fail "networkPolicy.vendors.cidrs is empty: the policy would let the gateway reach no vendor" -}}
{{- end -}}
{{- end -}}

{{- define "atrium.configMapName" -}}
{{- printf "%s-config" (include "atrium.fullname" .) -}}
{{- end -}}

{{/* The enabled interfaces, in the gateway's order. */}}
{{- define "atrium.enabledUpstreams" -}}
{{- $on := list -}}
{{- range $name := list "macro" "company" "documents" "deals" -}}
{{- if (get $.Values.upstreams $name).enabled -}}{{- $on = append $on $name -}}{{- end -}}
{{- end -}}
{{- if not $on -}}{{- fail "upstreams: enable at least one interface" -}}{{- end -}}
{{- join "," $on -}}
{{- end -}}

{{/*
The secret items this configuration uses, as YAML: item (the name under secrets.keys and secrets.values),
env (the `<NAME>_FILE` variable that points at it). Every one is mounted as a file under /var/run/secrets/atrium.
*/}}
{{- define "atrium.secretItems" -}}
{{- $items := list -}}
{{- range $name := list "macro" "company" "documents" "deals" -}}
{{- $u := get $.Values.upstreams $name -}}
{{- if $u.enabled -}}
{{- $upper := upper $name -}}
{{- if eq (default "token" $u.auth) "login" -}}
{{- $items = append $items (dict "item" (printf "%sPassword" $name) "env" (printf "UPSTREAM_%s_PASSWORD_FILE" $upper)) -}}
{{- else -}}
{{- $items = append $items (dict "item" (printf "%sToken" $name) "env" (printf "UPSTREAM_%s_TOKEN_FILE" $upper)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- if .Values.operator.enabled -}}
{{- $items = append $items (dict "item" "operatorToken" "env" "ATRIUM_OPERATOR_TOKEN_FILE") -}}
{{- end -}}
{{- $items = append $items (dict "item" "metricsToken" "env" "ATRIUM_METRICS_TOKEN_FILE") -}}
{{- if .Values.links.enabled -}}
{{- $items = append $items (dict "item" "linkSecret" "env" "ATRIUM_LINK_SECRET_FILE") -}}
{{- end -}}
{{- if .Values.database.enabled -}}
{{- $items = append $items (dict "item" "databaseUrl" "env" "DATABASE_URL_FILE") -}}
{{- end -}}
{{- if eq .Values.redis.mode "standalone" -}}
{{- $items = append $items (dict "item" "redisUrl" "env" "REDIS_URL_FILE") -}}
{{- else if and (ne .Values.redis.mode "none") .Values.redis.auth -}}
{{- $items = append $items (dict "item" "redisPassword" "env" "REDIS_PASSWORD_FILE") -}}
{{- end -}}
{{- toYaml (dict "items" $items) -}}
{{- end -}}

{{/* Memory limit in MiB (whole Mi or Gi, as the values schema allows). */}}
{{- define "atrium.memoryLimitMi" -}}
{{- $m := toString .Values.resources.limits.memory -}}
{{- if hasSuffix "Gi" $m -}}
{{- mul (trimSuffix "Gi" $m | int) 1024 -}}
{{- else -}}
{{- trimSuffix "Mi" $m | int -}}
{{- end -}}
{{- end -}}

{{/* Seconds Kubernetes waits after SIGTERM: preStop sleep + drain delay + in-flight grace + margin. */}}
{{- define "atrium.terminationGracePeriodSeconds" -}}
{{- $d := .Values.drain -}}
{{- $ms := add (int $d.delayMs) (int $d.shutdownGraceMs) 999 -}}
{{- add (int $d.preStopSleepSeconds) (div $ms 1000) (int $d.marginSeconds) -}}
{{- end -}}
