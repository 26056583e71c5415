// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Multicall3-compatible batching
/// @notice Many read calls in one `eth_call` (or several writes in one transaction), with the
/// function names, argument and result layouts of the widely deployed Multicall3 interface, so
/// viem's `multicall` (which encodes `aggregate3`), its `getEthBalance` reads and other clients
/// use it unchanged. Written for Agora; each call runs with this contract as `msg.sender`, so it
/// must never hold approvals or funds between transactions.
contract Multicall3 {
    struct Call {
        address target;
        bytes callData;
    }

    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Call3Value {
        address target;
        bool allowFailure;
        uint256 value;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    /// @notice Call number `index` failed and was not allowed to; `returnData` is its revert data.
    error CallFailed(uint256 index, bytes returnData);
    /// @notice `aggregate3Value` was sent a different amount than its calls forward.
    error ValueMismatch(uint256 sent, uint256 forwarded);

    /// @notice Runs every call; reverts if any fails. Returns the block number and each result.
    function aggregate(Call[] calldata calls)
        external
        payable
        returns (uint256 blockNumber, bytes[] memory returnData)
    {
        blockNumber = block.number;
        returnData = new bytes[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (!ok) revert CallFailed(i, data);
            returnData[i] = data;
        }
    }

    /// @notice Runs every call; with `requireSuccess`, a failure reverts the whole batch.
    function tryAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (Result[] memory returnData)
    {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            (bool ok, bytes memory data) = calls[i].target.call(calls[i].callData);
            if (requireSuccess && !ok) revert CallFailed(i, data);
            returnData[i] = Result(ok, data);
        }
    }

    /// @notice `tryAggregate` plus the block number and hash the results belong to.
    function tryBlockAndAggregate(bool requireSuccess, Call[] calldata calls)
        public
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData)
    {
        blockNumber = block.number;
        blockHash = blockhash(block.number);
        returnData = tryAggregate(requireSuccess, calls);
    }

    /// @notice `tryBlockAndAggregate` that requires every call to succeed.
    function blockAndAggregate(Call[] calldata calls)
        external
        payable
        returns (uint256 blockNumber, bytes32 blockHash, Result[] memory returnData)
    {
        return tryBlockAndAggregate(true, calls);
    }

    /// @notice Runs every call; a failing call reverts the batch unless it allows failure.
    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory returnData) {
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call3 calldata c = calls[i];
            (bool ok, bytes memory data) = c.target.call(c.callData);
            if (!ok && !c.allowFailure) revert CallFailed(i, data);
            returnData[i] = Result(ok, data);
        }
    }

    /// @notice `aggregate3` where each call forwards some of the value sent; the sum must match.
    function aggregate3Value(Call3Value[] calldata calls)
        external
        payable
        returns (Result[] memory returnData)
    {
        uint256 forwarded = 0;
        returnData = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; ++i) {
            Call3Value calldata c = calls[i];
            forwarded += c.value;
            (bool ok, bytes memory data) = c.target.call{value: c.value}(c.callData);
            if (!ok && !c.allowFailure) revert CallFailed(i, data);
            returnData[i] = Result(ok, data);
        }
        if (forwarded != msg.value) revert ValueMismatch(msg.value, forwarded);
    }

    /// @notice The hash of block `blockNumber` (zero beyond the last 256 blocks).
    function getBlockHash(uint256 blockNumber) external view returns (bytes32 blockHash) {
        blockHash = blockhash(blockNumber);
    }

    function getBlockNumber() external view returns (uint256 blockNumber) {
        blockNumber = block.number;
    }

    function getCurrentBlockCoinbase() external view returns (address coinbase) {
        coinbase = block.coinbase;
    }

    /// @notice Since the merge the former difficulty field carries PREVRANDAO.
    function getCurrentBlockDifficulty() external view returns (uint256 difficulty) {
        difficulty = block.prevrandao;
    }

    function getCurrentBlockGasLimit() external view returns (uint256 gaslimit) {
        gaslimit = block.gaslimit;
    }

    function getCurrentBlockTimestamp() external view returns (uint256 timestamp) {
        timestamp = block.timestamp;
    }

    /// @notice The native balance of `addr`, so balances can be read in the same batch as tokens.
    function getEthBalance(address addr) external view returns (uint256 balance) {
        balance = addr.balance;
    }

    function getLastBlockHash() external view returns (bytes32 blockHash) {
        unchecked {
            blockHash = blockhash(block.number - 1);
        }
    }

    function getBasefee() external view returns (uint256 basefee) {
        basefee = block.basefee;
    }

    function getChainId() external view returns (uint256 chainid) {
        chainid = block.chainid;
    }
}
