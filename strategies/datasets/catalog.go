// Package datasets is the catalog of the public traces that run as
// built-in workloads (`--workload mooncake-conversation`) and the cache
// they are fetched into. The repository carries none of them: `optimize
// workload fetch NAME` downloads a trace from the commit of its upstream
// repository named here, checks it against the SHA-256 pinned here, and
// keeps it at <cache>/datasets/<name>/<upstream file name>, where
// resolving the workload name finds it.
package datasets

import (
	"fmt"
	"path"
	"slices"

	"optimize/simcore/workload"
)

// Dataset is one public trace, as published at one commit of its
// repository.
type Dataset struct {
	Name        string // the workload's name (--workload NAME)
	Format      string // the trace format, one of simcore/workload's TraceFormats
	Description string // what a row is and where the requests came from
	Repo        string // the GitHub repository, OWNER/NAME
	Commit      string // the commit the file was taken from (full hash)
	Path        string // the file's path in Repo at Commit
	SHA256      string // of the file as published (hex)
	Size        int64  // of the file as published, bytes
	Rows        int    // requests in the file
	Licence     string // SPDX identifier
	Notice      string // the copyright and licence notice to keep with the file
	Citation    string // the paper to cite when the trace is used
}

// catalog is every dataset, in the order listings show them. The
// hashes and sizes are of the files at the commits named (fetched and
// checked when the entries were written); the notices and citations are
// the upstream repositories' own.
var catalog = []Dataset{
	{
		Name:        "mooncake-conversation",
		Format:      workload.FormatMooncake,
		Description: "Mooncake FAST'25 conversation trace: per request timestamp (ms), input_length, output_length and hash_ids, one id per 512-token prompt block (two requests share their first k × 512 prompt tokens exactly when their first k ids agree)",
		Repo:        "kvcache-ai/Mooncake",
		Commit:      "3b5a594133958449a1feaf1c9e0fc1b553e34a28",
		Path:        "FAST25-release/traces/conversation_trace.jsonl",
		SHA256:      "b8cbb061a85206d729d91cdc2981f43c9e0d99209dce588d3af5f7934408b9df",
		Size:        3_029_533,
		Rows:        12_031,
		Licence:     "Apache-2.0",
		Notice:      mooncakeNotice,
		Citation:    mooncakeCitation,
	},
	{
		Name:        "mooncake-synthetic",
		Format:      workload.FormatMooncake,
		Description: "Mooncake FAST'25 synthetic trace: the conversation trace's format (timestamp, input_length, output_length, hash_ids)",
		Repo:        "kvcache-ai/Mooncake",
		Commit:      "3b5a594133958449a1feaf1c9e0fc1b553e34a28",
		Path:        "FAST25-release/traces/synthetic_trace.jsonl",
		SHA256:      "bd070915a98fc0ed264d7cfef2ce746002eb3076a695ec31ba2674c0111ec131",
		Size:        1_136_313,
		Rows:        3_993,
		Licence:     "Apache-2.0",
		Notice:      mooncakeNotice,
		Citation:    mooncakeCitation,
	},
	{
		Name:        "azure-conv-2023",
		Format:      workload.FormatAzure,
		Description: "Azure LLM inference trace 2023, conversation: per request TIMESTAMP (date-time), ContextTokens, GeneratedTokens; sampled from Azure OpenAI production traffic on 2023-11-16",
		Repo:        "Azure/AzurePublicDataset",
		Commit:      "b469a113cedca53ddc3bdea71a143dc4b7d8700c",
		Path:        "data/AzureLLMInferenceTrace_conv.csv",
		SHA256:      "2f1e5b666d4e3055fdbba98598ce2ec307767b9064e03e2fa46676dbcc7d0bf8",
		Size:        719_188,
		Rows:        19_366,
		Licence:     "CC-BY-4.0",
		Notice:      azureNotice,
		Citation:    azureCitation,
	},
	{
		Name:        "azure-code-2023",
		Format:      workload.FormatAzure,
		Description: "Azure LLM inference trace 2023, code: per request TIMESTAMP (date-time), ContextTokens, GeneratedTokens; sampled from Azure OpenAI production traffic on 2023-11-16",
		Repo:        "Azure/AzurePublicDataset",
		Commit:      "b469a113cedca53ddc3bdea71a143dc4b7d8700c",
		Path:        "data/AzureLLMInferenceTrace_code.csv",
		SHA256:      "54e9a6d2a4bd06ba1e060304b900abbc74cbea53de96506e60fe5bb4f2277fb6",
		Size:        320_117,
		Rows:        8_819,
		Licence:     "CC-BY-4.0",
		Notice:      azureNotice,
		Citation:    azureCitation,
	},
}

const (
	mooncakeNotice   = "Copyright Moonshot AI and the Mooncake authors, licensed under the Apache License, Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0)"
	mooncakeCitation = `Ruoyu Qin, Zheming Li, Weiran He, Jialei Cui, Feng Ren, Mingxing Zhang, Yongwei Wu, Weimin Zheng, Xinran Xu. "Mooncake: Trading More Storage for Less Computation — A KVCache-centric Architecture for Serving LLM Chatbot". USENIX FAST 2025.`
	azureNotice      = "Copyright Microsoft Corporation, licensed under Creative Commons Attribution 4.0 International (https://creativecommons.org/licenses/by/4.0/)"
	azureCitation    = `Pratyush Patel, Esha Choukse, Chaojie Zhang, Aashaka Shah, Íñigo Goiri, Saeed Maleki, Ricardo Bianchini. "Splitwise: Efficient Generative LLM Inference Using Phase Splitting". ISCA 2024.`
)

// All returns every dataset, in the catalog's order.
func All() []Dataset { return slices.Clone(catalog) }

// Names lists the datasets' names, in the catalog's order.
func Names() []string {
	names := make([]string, len(catalog))
	for i, d := range catalog {
		names[i] = d.Name
	}
	return names
}

// Lookup returns the dataset called name.
func Lookup(name string) (Dataset, bool) {
	for _, d := range catalog {
		if d.Name == name {
			return d, true
		}
	}
	return Dataset{}, false
}

// File is the upstream file's name: the dataset's name in the cache and
// under a mirror.
func (d Dataset) File() string { return path.Base(d.Path) }

// URL is where the file is published: the raw file at the pinned commit,
// so that it cannot change under its checksum.
func (d Dataset) URL() string {
	return "https://raw.githubusercontent.com/" + d.Repo + "/" + d.Commit + "/" + d.Path
}

// Source names the repository as a user would look it up
// ("github.com/kvcache-ai/Mooncake").
func (d Dataset) Source() string { return "github.com/" + d.Repo }

// SizeText is the file's size in megabytes, as listings show it.
func (d Dataset) SizeText() string { return fmt.Sprintf("%.1f MB", float64(d.Size)/1e6) }
