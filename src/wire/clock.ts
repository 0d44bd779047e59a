/**
 * Time as the Responses API counts it (`created_at`, `completed_at`): whole seconds since the
 * epoch. The translation cores have no clock: they are given one, like their ids.
 */
export type Clock = () => number;

/** The wall clock in seconds. */
export const unixSeconds: Clock = () => Math.floor(Date.now() / 1000);
