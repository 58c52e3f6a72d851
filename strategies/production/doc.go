// Package production is a strategy's production side: the llm-d Router's
// EndpointPickerConfig and InferenceObjectives and vLLM's engine arguments,
// written from a configuration (WriteEPPConfig, WriteObjectives,
// WriteVLLMArgs) and read back onto one (ApplyEPPConfig, ApplyVLLMArgs),
// and how each setting's value carries over (Carry, CarriedSettings): by
// the counterparts the settings table declares, exactly, approximately or
// not at all.
package production
