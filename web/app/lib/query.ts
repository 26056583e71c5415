/**
 * The page's one query cache (TanStack Query's core, `@tanstack/query-core`) and two Preact hooks
 * over its observers. A page asks for what it shows by key (`useQuery({ queryKey, queryFn })`);
 * the cache fetches it once for every component that shows it, keeps it while the person moves
 * between pages, and re-renders them all when it changes. Live events and the page's own changes
 * write into it (`queryClient.setQueryData`) or mark it stale (`invalidateQueries`) instead of
 * each page fetching and merging by hand.
 *
 * Defaults: an answer is fresh for 10 s (a page opened again within that shows it without a
 * request; after, it shows it at once and reads again behind it), kept 5 minutes once nothing
 * shows it, no retry (a refusal shows at once, as before the cache), no refetch on focus. The
 * cache is emptied when the signed-in person changes (`session.ts`).
 */
import {
  type DefaultError,
  type InfiniteData,
  InfiniteQueryObserver,
  type InfiniteQueryObserverOptions,
  type InfiniteQueryObserverResult,
  notifyManager,
  QueryClient,
  type QueryKey,
  QueryObserver,
  type QueryObserverOptions,
  type QueryObserverResult,
} from "@tanstack/query-core";
import { useEffect, useReducer, useState } from "preact/hooks";

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 10_000,
      gcTime: 5 * 60_000,
      retry: false,
      refetchOnWindowFocus: false,
    },
  },
});
queryClient.mount();

// Render after the current task, as Preact batches its own state updates.
notifyManager.setScheduler((callback) => setTimeout(callback, 0));

/** Subscribes a component to an observer and keeps the observer's options current. */
function useObserver<R>(
  create: () => { subscribe(listener: () => void): () => void; getCurrentResult(): R },
  setOptions: (observer: never) => void,
  optimistic: (observer: never) => R,
): R {
  const [observer] = useState(create);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  useEffect(() => {
    const stop = observer.subscribe(notifyManager.batchCalls(() => rerender(0)));
    // What changed between the render and the subscription.
    rerender(0);
    return stop;
  }, [observer]);
  useEffect(() => setOptions(observer as never));
  return optimistic(observer as never);
}

/** The data under a key, fetched by `queryFn` when missing or stale; re-renders on changes. */
export function useQuery<TData, TKey extends QueryKey = QueryKey>(
  options: QueryObserverOptions<TData, DefaultError, TData, TData, TKey>,
): QueryObserverResult<TData, DefaultError> {
  const defaulted = queryClient.defaultQueryOptions(options);
  return useObserver(
    () => new QueryObserver(queryClient, defaulted),
    (observer: QueryObserver<TData, DefaultError, TData, TData, TKey>) =>
      observer.setOptions(defaulted),
    (observer: QueryObserver<TData, DefaultError, TData, TData, TKey>) =>
      observer.getOptimisticResult(defaulted),
  );
}

/** Pages under one key ("Load more"): `fetchNextPage()`, `hasNextPage`, `data.pages`. */
export function useInfiniteQuery<TPage, TKey extends QueryKey, TParam>(
  options: InfiniteQueryObserverOptions<
    TPage,
    DefaultError,
    InfiniteData<TPage, TParam>,
    TKey,
    TParam
  >,
): InfiniteQueryObserverResult<InfiniteData<TPage, TParam>, DefaultError> {
  // deno-lint-ignore no-explicit-any
  const defaulted = queryClient.defaultQueryOptions(options as any) as any;
  return useObserver(
    () => new InfiniteQueryObserver(queryClient, defaulted),
    (
      observer: InfiniteQueryObserver<
        TPage,
        DefaultError,
        InfiniteData<TPage, TParam>,
        TKey,
        TParam
      >,
    ) => observer.setOptions(defaulted),
    (
      observer: InfiniteQueryObserver<
        TPage,
        DefaultError,
        InfiniteData<TPage, TParam>,
        TKey,
        TParam
      >,
    ) => observer.getOptimisticResult(defaulted),
  );
}

/** Changes every page of an infinite query's data in the cache (a live event, an action's answer). */
export function updatePages<TPage>(
  queryKey: QueryKey,
  change: (page: TPage, index: number) => TPage,
): void {
  queryClient.setQueriesData<InfiniteData<TPage>>(
    { queryKey },
    (data) => data ? { ...data, pages: data.pages.map(change) } : data,
  );
}

/**
 * Reads an infinite query's pages again from a live cause (a feed came up, an event), after any
 * "Load more" on its way. Read at once, it cancels that page's request: the person's Load more
 * did nothing (seen on a 150 ms link when the feed came up after the click). Waiting joins the
 * fetch in flight without cancelling it; the read that follows then covers every page.
 */
export async function refreshPages(queryKey: QueryKey): Promise<void> {
  if (queryClient.isFetching({ queryKey })) {
    await queryClient.refetchQueries({ queryKey, type: "active" }, { cancelRefetch: false })
      .catch(() => {});
  }
  await queryClient.invalidateQueries({ queryKey });
}
