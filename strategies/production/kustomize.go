package production

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"optimize/simcore/cluster"
)

// The deployment step: a kustomization that puts an export onto llm-d's
// own deployment, as llm-d-router's deploy/components lay it out at
// ebab68792 — the EPP reads its EndpointPickerConfig from the ConfigMap
// epp-config (key epp-config.yaml, mounted at /etc/epp/epp-config.yaml
// and named by --config-file), and the vLLM pods are the Deployment
// vllm-d whose first container, vllm, runs `vllm serve` with its args;
// under P/D (deploy/components vllm-prefill and vllm-decode, as its
// environments/dev/p-d stacks them) the prefill pods are the Deployment
// vllm-p, its first container vllm too, and vllm-d's pods decode.

// The names of llm-d's deployment the kustomization patches.
const (
	EPPConfigMap   = "epp-config"
	VLLMDeployment = "vllm-d"
	// VLLMPrefillDeployment is the P/D prefill pods' Deployment.
	VLLMPrefillDeployment = "vllm-p"
	// roleLabelPath is the pod template's llm-d.ai/role label as a JSON
	// patch path ("/" in the key escaped as ~1).
	roleLabelPath    = "/spec/template/metadata/labels/llm-d.ai~1role"
	VLLMContainer    = "vllm"
	KustomizeBaseDir = "base"
)

// WriteKustomization writes kustomization.yaml for the export whose files
// are eppFile and resources (the InferenceObjectives, the WVA's ConfigMap;
// "" when not written): `kubectl
// apply -k` on the directory regenerates the EPP's ConfigMap from the
// EndpointPickerConfig (its name gets kustomize's content hash, so the
// EPP Deployment that mounts it is rolled), appends c's vLLM arguments
// to the vllm container of vllm-d (rolling the vLLM pods), and applies
// the resources. The llm-d deployment it patches is the
// directory's base/.
func WriteKustomization(w io.Writer, c *cluster.Config, header []string, eppFile string, resources ...string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "# %s\n", h)
	}
	if c.PD.Enabled() {
		fmt.Fprintf(&b, "# %s/ holds the llm-d deployment this patches: llm-d-router's deploy/components inference-gateway (the EPP, mounting ConfigMap %s), vllm-prefill (Deployment %s) and vllm-decode (Deployment %s), container %s first in each, with their variables set, or your own of the same names.\n",
			KustomizeBaseDir, EPPConfigMap, VLLMPrefillDeployment, VLLMDeployment, VLLMContainer)
	} else {
		fmt.Fprintf(&b, "# %s/ holds the llm-d deployment this patches: llm-d-router's deploy/components inference-gateway (the EPP, mounting ConfigMap %s) and vllm-decode (Deployment %s, container %s first), with their variables set, or your own of the same names.\n",
			KustomizeBaseDir, EPPConfigMap, VLLMDeployment, VLLMContainer)
	}
	b.WriteString("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n")
	fmt.Fprintf(&b, "- %s\n", KustomizeBaseDir)
	for _, r := range resources {
		if r != "" {
			fmt.Fprintf(&b, "- %s\n", r)
		}
	}
	// Created here, as llm-d's scripts create it beside the kustomization
	// (kubectl create configmap epp-config --from-file=epp-config.yaml).
	fmt.Fprintf(&b, "configMapGenerator:\n- name: %s\n  files:\n  - %s\n", EPPConfigMap, eppFile)
	b.WriteString("patches:\n")
	patch := func(deployment, role string, args []string) {
		fmt.Fprintf(&b, "- target:\n    kind: Deployment\n    name: %s\n  patch: |-\n", deployment)
		if role != "" {
			fmt.Fprintf(&b, "    - op: add\n      path: %s\n      value: %s\n", roleLabelPath, role)
		}
		for _, a := range args {
			fmt.Fprintf(&b, "    - op: add\n      path: /spec/template/spec/containers/0/args/-\n      value: %s\n", strconv.Quote(a))
		}
	}
	if c.PD.Enabled() {
		patch(VLLMPrefillDeployment, RolePrefill, VLLMRoleArgs(c, RolePrefill))
		patch(VLLMDeployment, RoleDecode, VLLMRoleArgs(c, RoleDecode))
	} else {
		patch(VLLMDeployment, "", VLLMArgs(c))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
