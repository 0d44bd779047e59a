import type { ModelTarget, RouterConfig } from "../config/load.js";
import { modelNotFound } from "../ops/errors.js";
import { mayUseModel, type ApiKey } from "../keys/policy.js";

export type ModelConfig = RouterConfig["models"][string];

/** The model's pool, or 404 model_not_found (also for a model outside the key's list: no oracle). */
export function targetsFor(cfg: RouterConfig, model: string, key: ApiKey | null = null): { modelCfg: ModelConfig; targets: ModelTarget[] } {
  const modelCfg = cfg.models[model];
  const targets = cfg.targets.get(model);
  if (!modelCfg || !targets || !mayUseModel(key, model)) throw modelNotFound(model);
  return { modelCfg, targets };
}

/** One model a request may be served by: the one asked for, then its fallbacks. */
export interface ModelStep {
  model: string;
  modelCfg: ModelConfig;
  targets: ModelTarget[];
}

/**
 * The models to try for `model`, in order: itself, then each of its `fallbacks` followed by
 * that fallback's own fallbacks (depth first, each model once). The config has no cycles.
 */
export function fallbackSteps(cfg: RouterConfig, model: string, modelCfg: ModelConfig, targets: ModelTarget[]): ModelStep[] {
  const steps: ModelStep[] = [{ model, modelCfg, targets }];
  // Configs built in code (tests) may lack the parsed default.
  if (!modelCfg.fallbacks?.length) return steps;
  const seen = new Set([model]);
  const visit = (names: string[]) => {
    for (const name of names) {
      const m = cfg.models[name];
      const t = cfg.targets.get(name);
      if (seen.has(name) || !m || !t) continue;
      seen.add(name);
      steps.push({ model: name, modelCfg: m, targets: t });
      visit(m.fallbacks ?? []);
    }
  };
  visit(modelCfg.fallbacks);
  return steps;
}
