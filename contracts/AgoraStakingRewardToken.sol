// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {ERC20Permit} from "@openzeppelin/contracts/token/ERC20/extensions/ERC20Permit.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// @title The platform's staking-rewards token (AGS)
/// @notice Paid out as rewards to members who stake. A plain ERC-20 (18 decimals) with EIP-2612
/// permits. Rewards are minted by the owner or by distributors the owner names (a staking
/// contract, or the account that runs the reward schedule); nothing else creates supply.
contract AgoraStakingRewardToken is ERC20, ERC20Permit, Ownable {
    /// @notice Accounts allowed to mint rewards besides the owner.
    mapping(address => bool) public isDistributor;

    event DistributorChanged(address indexed account, bool allowed);

    error NotDistributor(address account);

    constructor(address initialOwner)
        ERC20("Agora Staking Reward", "AGS")
        ERC20Permit("Agora Staking Reward")
        Ownable(initialOwner)
    {}

    /// @notice Lets `account` mint rewards, or stops it; the owner only.
    function setDistributor(address account, bool allowed) external onlyOwner {
        isDistributor[account] = allowed;
        emit DistributorChanged(account, allowed);
    }

    /// @notice Mints `amount` reward tokens to `to`; the owner or a distributor only.
    function mint(address to, uint256 amount) external {
        if (msg.sender != owner() && !isDistributor[msg.sender]) revert NotDistributor(msg.sender);
        _mint(to, amount);
    }
}
