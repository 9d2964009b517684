{{/*
beeburst.name: the app.kubernetes.io/name of everything the chart makes ("beeburst", or
nameOverride).
*/}}
{{- define "beeburst.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
beeburst.fullname: the prefix of every object's name - fullnameOverride, else the release's
name when it contains the chart's name (release "beeburst": beeburst-manager), else
<release>-<name>. Cluster-scoped objects (ClusterRole, ClusterRoleBinding) carry it too, so two
releases never share one.
*/}}
{{- define "beeburst.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- $name := include "beeburst.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 54 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 54 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* beeburst.manager: the name of the manager's Deployment, ServiceAccount and RBAC. */}}
{{- define "beeburst.manager" -}}
{{- include "beeburst.fullname" . }}-manager
{{- end }}

{{- define "beeburst.labels" -}}
app.kubernetes.io/name: {{ include "beeburst.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* beeburst.selectorLabels: the manager pod's labels that its Deployment and Service select. */}}
{{- define "beeburst.selectorLabels" -}}
app.kubernetes.io/name: {{ include "beeburst.name" . }}
app.kubernetes.io/component: manager
{{- end }}

{{/* beeburst.tag: the images' tag - image.tag, else the chart's appVersion (its release). */}}
{{- define "beeburst.tag" -}}
{{- .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "beeburst.image" -}}
{{- printf "%s:%s" .Values.image.repository (include "beeburst.tag" .) }}
{{- end }}

{{/* beeburst.agentImage: agentImage, else the agent of the same release next to the manager's. */}}
{{- define "beeburst.agentImage" -}}
{{- .Values.agentImage | default (printf "ghcr.io/beeburst/agent:%s" (include "beeburst.tag" .)) }}
{{- end }}
