import type { ModelTarget, RouterConfig } from "./config/load.js";
import { modelNotFound } from "./errors.js";
import { mayUseModel, type ApiKey } from "./keys/policy.js";

export type ModelConfig = RouterConfig["models"][string];

/** The model's pool, or 404 model_not_found (also for a model outside the key's list: no oracle). */
export function targetsFor(cfg: RouterConfig, model: string, key: ApiKey | null = null): { modelCfg: ModelConfig; targets: ModelTarget[] } {
  const modelCfg = cfg.models[model];
  const targets = cfg.targets.get(model);
  if (!modelCfg || !targets || !mayUseModel(key, model)) throw modelNotFound(model);
  return { modelCfg, targets };
}
